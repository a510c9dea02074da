// fold_constant (fold_constant.h): one forward sweep, substituting folded values into later
// bindings.
#include "anvil/graph/passes/fold_constant.h"

#include "anvil/base/error.h"
#include "anvil/graph/passes/substitute.h"
#include "anvil/graph/printer.h"

namespace anvil::graph::passes {
namespace {

bool static_shape_value(const Expr& e) {
  const auto* s = e.as<ShapeExprNode>();
  if (s == nullptr) return false;
  for (const PrimExpr& v : s->values())
    if (!ir::as_const_int(v)) return false;
  return true;
}

// A value that replaces its var everywhere: a var, a constant or a shape value.
bool propagatable(const Expr& e) { return e.as<VarNode>() || e.as<ConstantNode>() || e.as<ShapeExprNode>(); }

Expr fold_shape_to_tensor(const ShapeExprNode& s) {
  Tensor t = Tensor::empty({static_cast<int64_t>(s.values().size())}, DataType::int64());
  auto* p = static_cast<int64_t*>(t.data());
  for (size_t i = 0; i < s.values().size(); ++i) p[i] = *ir::as_const_int(s.values()[i]);
  return Constant::make(t);
}

Expr fold_call(const Expr& e, const ConstantEvaluator& evaluate) {
  const auto* c = e.as<CallNode>();
  if (c == nullptr || c->op() == kCallTIR) return e;
  if (c->op() == "shape_of" && c->args().size() == 1) {
    const Type& t = c->args()[0].type();
    if (t.is_tensor() && t.static_shape()) return ShapeExpr::make(t.shape());
    return e;
  }
  if (c->op() == "shape_to_tensor" && c->args().size() == 1 && static_shape_value(c->args()[0]))
    return fold_shape_to_tensor(*c->args()[0].as<ShapeExprNode>());
  if (!evaluate || !c->type().is_tensor()) return e;
  std::optional<std::vector<int64_t>> shape = c->type().static_shape();
  if (!shape) return e;
  bool any_constant = false;
  for (const Expr& a : c->args()) {
    if (a.as<ConstantNode>()) any_constant = true;
    else if (!static_shape_value(a)) return e;
  }
  if (!any_constant) return e;
  std::optional<Tensor> value = evaluate(*c);
  if (!value) return e;
  ANVIL_ICHECK(value->defined() && value->dtype() == c->type().dtype() && value->shape() == *shape,
               "fold_constant: the evaluator's value of ", to_string(e), " is ",
               value->defined() ? value->to_string() : "undefined", ", expected ", to_string(c->type()));
  return Constant::make(*value);
}

}  // namespace

Function fold_constant(const Function& f, const ConstantEvaluator& evaluate) {
  VarMap map, tuples;  // tuples: vars bound to tuple literals (fields already substituted)
  std::vector<Binding> out;
  bool changed = false;
  for (const Binding& b : f.bindings()) {
    Expr value = fold_call(substitute(b.value, map, &tuples), evaluate);
    if (propagatable(value)) {
      map[b.var.get()] = value;
      changed = true;
      continue;
    }
    if (value.as<TupleNode>()) tuples[b.var.get()] = value;
    if (value.same_as(b.value)) {
      out.push_back(b);
      continue;
    }
    changed = true;
    Var v = b.var;
    if (!type_equal(v.type(), value.type())) {
      v = Var::make(b.var.name(), value.type());
      map[b.var.get()] = v;
    }
    out.push_back({v, value});
  }
  if (!changed) return f;
  return Function::make(f.params(), std::move(out), substitute(f.result(), map, &tuples));
}

IRModule fold_constant(const IRModule& mod, const ConstantEvaluator& evaluate) {
  IRModule out = mod;
  for (auto& [name, f] : out.functions) f = fold_constant(f, evaluate);
  return out;
}

}  // namespace anvil::graph::passes
