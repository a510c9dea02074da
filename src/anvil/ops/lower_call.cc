// One graph call -> te compute + schedule -> PrimFunc.
#include "anvil/ops/lower_call.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/gpu/schedule_gpu.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/lower.h"

namespace anvil::ops {
namespace {

class VarCollector : public ir::ExprVisitor {
 public:
  std::vector<ir::Var> vars;
  void visit_(const ir::VarNode* op) override {
    if (seen_.insert(op).second) vars.push_back(ir::Var(op));
  }

 private:
  std::set<const ir::VarNode*> seen_;
};

void collect_type(const graph::Type& t, VarCollector& c) {
  if (t.is_tuple()) {
    for (const graph::Type& f : t.fields()) collect_type(f, c);
  } else if (t.has_rank()) {
    for (const ir::PrimExpr& d : t.shape()) c.visit_expr(d);
  } else if (const std::vector<ir::PrimExpr>* v = t.shape_values()) {
    for (const ir::PrimExpr& d : *v) c.visit_expr(d);  // a run-time value the compute reads (Trilu's k)
  }
}

std::vector<graph::Type> output_types(const graph::Type& t) {
  if (t.is_tuple()) return t.fields();
  return {t};
}

// A hand-written kernel (OpImplementation::kernel): buffers named like lower_call's placeholders
// (arg<i>) and outputs (out<i>), the implementation's loop nest, te::make_kernel for the
// parameter convention.
LoweredCall lower_hand_kernel(const graph::CallNode& call, const OpImplementation& impl, const Target& target,
                              const std::string& name, std::vector<ir::Var> shape_vars) {
  std::vector<ir::Buffer> inputs, outputs;
  std::vector<tir::FuncParam> params;
  for (size_t i = 0; i < call.args().size(); ++i) {
    const graph::Type& t = call.args()[i].type();
    if (!t.is_tensor()) {
      inputs.emplace_back();
      continue;
    }
    if (!t.has_rank()) value_error(call.op(), ": argument ", i, " has no known rank at lowering");
    inputs.push_back(ir::decl_buffer(t.shape(), t.dtype(), "arg" + std::to_string(i)));
    params.emplace_back(inputs.back());
  }
  std::vector<graph::Type> outs = output_types(call.type());
  for (size_t i = 0; i < outs.size(); ++i) {
    outputs.push_back(ir::decl_buffer(outs[i].shape(), outs[i].dtype(), "out" + std::to_string(i)));
    params.emplace_back(outputs.back());
  }
  for (const ir::Var& v : shape_vars) params.emplace_back(v);
  LoweredCall result;
  result.implementation = impl.name;
  result.shape_vars = std::move(shape_vars);
  try {
    result.func = te::make_kernel(name, std::move(params), impl.kernel(call, inputs, outputs, target));
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(call.op(), " (", impl.name, "): ", e.what()));
  }
  return result;
}

}  // namespace

std::vector<ir::Var> shape_vars_of(const std::vector<graph::Type>& types) {
  VarCollector c;
  for (const graph::Type& t : types) collect_type(t, c);
  std::vector<ir::Var> vars = c.vars;
  std::stable_sort(vars.begin(), vars.end(), [](const ir::Var& a, const ir::Var& b) { return a->name() < b->name(); });
  return vars;
}

LoweredCall lower_call(const graph::CallNode& call, const Target& target, const std::string& name) {
  const OpImplementation& impl = select_implementation(call.op(), target);
  if (impl.kernel) {
    std::vector<graph::Type> types;
    for (const graph::Expr& a : call.args()) types.push_back(a.type());
    for (const graph::Type& t : output_types(call.type())) types.push_back(t);
    return lower_hand_kernel(call, impl, target, name, shape_vars_of(types));
  }
  std::vector<te::Tensor> inputs;
  std::vector<graph::Type> types;
  std::vector<te::LowerArg> args;
  for (size_t i = 0; i < call.args().size(); ++i) {
    const graph::Type& t = call.args()[i].type();
    types.push_back(t);
    if (!t.is_tensor()) {
      inputs.emplace_back();
      continue;
    }
    if (!t.has_rank()) value_error(call.op(), ": argument ", i, " has no known rank at lowering");
    te::Tensor p = te::placeholder(t.shape(), t.dtype(), "arg" + std::to_string(i));
    inputs.push_back(p);
    args.emplace_back(p);
  }
  for (const graph::Type& t : output_types(call.type())) types.push_back(t);
  std::vector<te::Tensor> outs;
  try {
    outs = impl.compute(call, inputs);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(call.op(), " (", impl.name, "): ", e.what()));
  }
  std::vector<graph::Type> expected = output_types(call.type());
  if (outs.size() != expected.size())
    internal_check_failed(__FILE__, __LINE__, "outs.size() == expected.size()",
                          str_cat(impl.name, " returned ", outs.size(), " outputs for ", expected.size()));
  for (const te::Tensor& o : outs) args.emplace_back(o);
  te::Schedule s = te::create_schedule(outs);
  LoweredCall result;
  result.implementation = impl.name;
  result.shape_vars = shape_vars_of(types);
  for (const ir::Var& v : result.shape_vars) args.emplace_back(v);
  try {
    impl.schedule(s, outs, target);
    result.func = te::lower(s, args, name);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(call.op(), " (", impl.name, "): ", e.what()));
  }
  return result;
}

LoweredCall lower_fused(const graph::Function& group, const graph::CallNode& call, const Target& target,
                        const std::string& name) {
  if (group.params().size() != call.args().size())
    value_error("call_fused of ", name, ": ", call.args().size(), " arguments for ", group.params().size(), " parameters");
  std::unordered_map<const graph::ExprNode*, te::Tensor> tensors;
  std::vector<te::LowerArg> args;
  std::vector<graph::Type> types;
  for (size_t i = 0; i < group.params().size(); ++i) {
    // The call's argument types, whose symbolic dims are the caller's Vars (the VM passes those).
    const graph::Type& t = call.args()[i].type();
    if (!t.is_tensor() || !t.has_rank()) value_error("call_fused of ", name, ": argument ", i, " is not a tensor of known rank");
    te::Tensor p = te::placeholder(t.shape(), t.dtype(), "arg" + std::to_string(i));
    tensors[group.params()[i].get()] = p;
    args.emplace_back(p);
    types.push_back(t);
  }
  std::string implementation = "fused(";
  // An anchor group (fuse_ops.h): the anchor's schedule, given the epilogue's output (and, for a
  // reduction, the prologue's stages before it).
  const OpImplementation* anchor = nullptr;
  for (const graph::Binding& b : group.bindings()) {
    const auto* c = b.value.as<graph::CallNode>();
    if (c == nullptr) value_error("fused group ", name, ": binding %", b.var.name(), " is not an operator call");
    const OpImplementation& impl = select_implementation(c->op(), target);
    if (!impl.compute)
      value_error("fused group ", name, ": ", c->op(), " (", impl.name, ") is a hand-written kernel and cannot be fused");
    implementation += (implementation.back() == '(' ? "" : ",") + impl.name;
    const graph::OpInfo* info = graph::find_op(c->op());
    // Reductions anchor their group as well: their schedule inlines the prologue stages.
    if (info != nullptr && (info->pattern == graph::OpPattern::kOutEWiseFusable ||
                            info->pattern == graph::OpPattern::kCommReduce)) {
      if (anchor != nullptr) value_error("fused group ", name, ": more than one anchor (", anchor->name, ", ", impl.name, ")");
      anchor = &impl;
    }
    std::vector<te::Tensor> inputs;
    for (const graph::Expr& a : c->args()) {
      auto it = tensors.find(a.get());
      if (it != tensors.end()) inputs.push_back(it->second);
      else if (a.as<graph::ShapeExprNode>() != nullptr) inputs.emplace_back();
      else value_error("fused group ", name, ": an argument of ", c->op(), " is neither a group value nor a ShapeExpr");
    }
    std::vector<te::Tensor> outs;
    try {
      outs = impl.compute(*c, inputs);
    } catch (const Error& e) {
      throw Error(e.kind(), str_cat(name, ": ", c->op(), " (", impl.name, "): ", e.what()));
    }
    ANVIL_ICHECK(outs.size() == 1, impl.name, " returned ", outs.size(), " outputs inside fused group ", name);
    tensors[b.var.get()] = outs[0];
  }
  implementation += ")";
  auto it = tensors.find(group.result().get());
  if (it == tensors.end()) value_error("fused group ", name, ": the result is not one of its values");
  te::Tensor out = it->second;
  args.emplace_back(out);
  types.push_back(call.type());
  LoweredCall result;
  result.implementation = implementation;
  result.shape_vars = shape_vars_of(types);
  for (const ir::Var& v : result.shape_vars) args.emplace_back(v);
  try {
    te::Schedule s = te::create_schedule({out});
    if (anchor != nullptr) anchor->schedule(s, {out}, target);
    else if (target_family(target) == "gpu") gpu::schedule_injective_gpu(s, {out}, target);
    else schedule_injective(s, {out}, target);
    result.func = te::lower(s, args, name);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(name, " (", implementation, "): ", e.what()));
  }
  return result;
}

}  // namespace anvil::ops
