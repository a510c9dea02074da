// One graph call -> te compute + schedule -> PrimFunc.
#include "anvil/ops/lower_call.h"

#include <algorithm>
#include <set>

#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
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
  }
}

std::vector<graph::Type> output_types(const graph::Type& t) {
  if (t.is_tuple()) return t.fields();
  return {t};
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

}  // namespace anvil::ops
