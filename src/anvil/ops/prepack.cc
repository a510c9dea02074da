// Compile-time conv2d weight packing (see prepack.h).
#include "anvil/ops/prepack.h"

#include "anvil/graph/builder.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {

graph::Function prepack_conv2d_weights(const graph::Function& f, const Target& target) {
  if (target_family(target) != "cpu") return f;
  std::vector<graph::Binding> out;
  bool changed = false;
  for (const graph::Binding& b : f.bindings()) {
    const auto* call = b.value.as<graph::CallNode>();
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
