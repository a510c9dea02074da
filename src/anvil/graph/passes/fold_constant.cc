// fold_constant (fold_constant.h): one forward sweep, substituting folded values into later
// bindings.
#include "anvil/graph/passes/fold_constant.h"

#include <set>

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
  if (c == nullptr || call_keeps_type(c->op())) return e;
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


// The branch an if with a constant condition takes, or nullptr (not such an if, or no module).
const Function* taken_branch(const Expr& value, const IRModule* mod) {
  const auto* c = value.as<CallNode>();
  if (mod == nullptr || c == nullptr || c->op() != kCallIf || c->args().empty()) return nullptr;
  const auto* cond = c->args()[0].as<ConstantNode>();
  if (cond == nullptr || cond->data().numel() != 1) return nullptr;
  const Tensor& t = cond->data();  // one element: data() points at it whatever the strides
  bool taken = false;
  const auto* bytes = static_cast<const uint8_t*>(t.data());
  for (size_t i = 0; i < t.dtype().bytes(); ++i) taken = taken || bytes[i] != 0;
  return &mod->function(get_string(c->attrs(), taken ? "then_func" : "else_func"));
}

Function fold_in(const Function& f, const ConstantEvaluator& evaluate, const IRModule* mod) {
  VarMap map, tuples;  // tuples: vars bound to tuple literals (fields already substituted)
  std::vector<Binding> out;
  bool changed = false;
  // Bindings to fold, last first: the function's, then those of inlined branches in their place
  // (`inlined`: its var is the branch's own and gets a fresh one here, as the branch function
  // stays in the module or is inlined elsewhere too).
  struct Item {
    Binding b;
    bool inlined;
  };
  std::vector<Item> pending;
  for (auto it = f.bindings().rbegin(); it != f.bindings().rend(); ++it) pending.push_back({*it, false});
  // An inlined branch's result, bound to the if's var once the branch's bindings are folded.
  struct Result {
    size_t depth;
    Var var;
    Expr result;
  };
  std::vector<Result> results;
  while (!pending.empty() || !results.empty()) {
    if (!results.empty() && results.back().depth == pending.size()) {
      Result r = results.back();
      results.pop_back();
      Expr value = substitute(r.result, map, &tuples);
      map[r.var.get()] = value;
      if (value.as<TupleNode>()) tuples[r.var.get()] = value;
      continue;
    }
    auto [b, inlined] = pending.back();
    pending.pop_back();
    Expr value = fold_call(substitute(b.value, map, &tuples), evaluate);
    if (const Function* branch = taken_branch(value, mod)) {
      // Its parameters are the if's captured arguments; its bindings run next, then the if's
      // var is its result.
      const auto& args = value.as<CallNode>()->args();
      for (size_t i = 0; i < branch->params().size(); ++i) map[branch->params()[i].get()] = args.at(i + 1);
      results.push_back({pending.size(), b.var, branch->result()});
      for (auto it = branch->bindings().rbegin(); it != branch->bindings().rend(); ++it) pending.push_back({*it, true});
      changed = true;
      continue;
    }
    if (propagatable(value)) {
      map[b.var.get()] = value;
      changed = true;
      continue;
    }
    if (value.as<TupleNode>()) tuples[b.var.get()] = value;
    if (!inlined && value.same_as(b.value)) {
      out.push_back(b);
      continue;
    }
    changed = true;
    Var v = b.var;
    if (inlined || !type_equal(v.type(), value.type())) {
      v = Var::make(b.var.name(), value.type());
      map[b.var.get()] = v;
    }
    out.push_back({v, value});
  }
  if (!changed) return f;
  return Function::make(f.params(), std::move(out), substitute(f.result(), map, &tuples));
}

// The functions the bindings of `f` call through if/loop.
void add_callees(const Function& f, std::set<std::string>& names) {
  for (const Binding& b : f.bindings())
    if (const auto* c = b.value.as<CallNode>())
      for (const char* key : {"then_func", "else_func", "body"})
        if ((c->op() == kCallIf || c->op() == kCallLoop) && has_attr(c->attrs(), key))
          names.insert(get_string(c->attrs(), key));
}

}  // namespace

Function fold_constant(const Function& f, const ConstantEvaluator& evaluate) { return fold_in(f, evaluate, nullptr); }

IRModule fold_constant(const IRModule& mod, const ConstantEvaluator& evaluate) {
  IRModule out = mod;
  std::set<std::string> before, after;
  for (const auto& [name, f] : mod.functions) add_callees(f, before);
  for (auto& [name, f] : out.functions) f = fold_in(f, evaluate, &mod);
  // Branches no if calls any more (all inlined) go.
  for (const auto& [name, f] : out.functions) add_callees(f, after);
  for (const std::string& name : before)
    if (!after.count(name)) out.functions.erase(name);
  return out;
}

}  // namespace anvil::graph::passes
