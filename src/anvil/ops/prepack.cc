// Compile-time conv2d and dense/matmul weight packing (see prepack.h).
#include "anvil/ops/prepack.h"

#include "anvil/graph/builder.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {

namespace {

// nn.dense(x, w [N, K]) or matmul(x, w [K, N]) (x of rank >= 2) with a constant float32 w ->
// nn.dense(x, nn.dense_pack_weight(w; block, layout), weight_layout packed, units N); false when
// the call is not one of those.
bool prepack_dense(const graph::Binding& b, const graph::CallNode& call, const Target& target,
                   std::vector<graph::Binding>& out) {
  const bool dense = call.op() == "nn.dense", mm = call.op() == "matmul";
  if ((!dense && !mm) || call.args().size() != 2 || call.args()[1].as<graph::ConstantNode>() == nullptr) return false;
  if (dense && graph::get_string(call.attrs(), "weight_layout", "NK") != "NK") return false;
  const graph::Type& x = call.args()[0].type();
  const graph::Type& w = call.args()[1].type();
  if (x.ndim() < 2 || w.ndim() != 2 || x.dtype() != w.dtype()) return false;
  auto n = ir::as_const_int(w.dim(dense ? 0 : 1)), k = ir::as_const_int(w.dim(dense ? 1 : 0));
  if (!n || !k) return false;
  const int block = dense_panel_width(*n, *k, w.dtype(), target);
  if (block == 0) return false;
  graph::Attrs pack_attrs{{"block", graph::AttrValue(block)}, {"layout", graph::AttrValue(dense ? "NK" : "KN")}};
  graph::Expr pack = graph::Call::make("nn.dense_pack_weight", {call.args()[1]}, pack_attrs,
                                       graph::infer_call_type("nn.dense_pack_weight", {call.args()[1]}, pack_attrs));
  graph::Var packed = graph::Var::make(b.var.name() + "_weight", pack.type());
  out.push_back({packed, pack});
  graph::Attrs attrs{{"weight_layout", graph::AttrValue("packed")}, {"units", graph::AttrValue(*n)}};
  std::vector<graph::Expr> args = {call.args()[0], packed};
  out.push_back({b.var, graph::Call::make("nn.dense", args, attrs, graph::infer_call_type("nn.dense", args, attrs))});
  return true;
}

}  // namespace

graph::Function prepack_conv2d_weights(const graph::Function& f, const Target& target) {
  if (target_family(target) != "cpu") return f;
  std::vector<graph::Binding> out;
  bool changed = false;
  for (const graph::Binding& b : f.bindings()) {
    const auto* call = b.value.as<graph::CallNode>();
    if (call != nullptr && prepack_dense(b, *call, target, out)) {
      changed = true;
      continue;
    }
    if (call == nullptr || call->op() != "nn.conv2d" || call->args().size() != 2 ||
        graph::get_string(call->attrs(), "kernel_layout", "OIHW") != "OIHW" ||
        call->args()[1].as<graph::ConstantNode>() == nullptr) {
      out.push_back(b);
      continue;
    }
    const int block = conv2d_weight_block(*call, target);
    if (block == 0) {
      out.push_back(b);
      continue;
    }
    graph::Attrs pack_attrs{{"block", graph::AttrValue(block)}};
    graph::Expr pack = graph::Call::make("nn.conv2d_pack_weight", {call->args()[1]}, pack_attrs,
                                         graph::infer_call_type("nn.conv2d_pack_weight", {call->args()[1]}, pack_attrs));
    graph::Var packed = graph::Var::make(b.var.name() + "_weight", pack.type());
    out.push_back({packed, pack});
    graph::Attrs attrs = call->attrs();
    attrs["kernel_layout"] = graph::AttrValue("OIHW" + std::to_string(block) + "o");
    std::vector<graph::Expr> args = {call->args()[0], packed};
    out.push_back({b.var, graph::Call::make("nn.conv2d", args, attrs, graph::infer_call_type("nn.conv2d", args, attrs))});
    changed = true;
  }
  if (!changed) return f;
  return graph::Function::make(f.params(), std::move(out), f.result());
}

graph::IRModule prepack_conv2d_weights(const graph::IRModule& mod, const Target& target) {
  graph::IRModule result = mod;
  for (auto& [name, f] : result.functions) f = prepack_conv2d_weights(f, target);
  return result;
}

}  // namespace anvil::ops
