// Var substitution and use counting (substitute.h).
#include "anvil/graph/passes/substitute.h"

#include "anvil/graph/builder.h"

namespace anvil::graph::passes {

Expr substitute(const Expr& e, const VarMap& map, const VarMap* tuples) {
  switch (e.kind()) {
    case ExprKind::kVar: {
      auto it = map.find(e.get());
      return it == map.end() ? e : it->second;
    }
    case ExprKind::kConstant:
    case ExprKind::kShapeExpr:
      return e;
    case ExprKind::kTuple: {
      const auto& fields = e.as<TupleNode>()->fields();
      std::vector<Expr> out;
      bool changed = false;
      for (const Expr& f : fields) {
        out.push_back(substitute(f, map, tuples));
        changed = changed || !out.back().same_as(f);
      }
      return changed ? Tuple::make(std::move(out)) : e;
    }
    case ExprKind::kTupleGetItem: {
      const auto* g = e.as<TupleGetItemNode>();
      if (tuples != nullptr) {
        auto it = tuples->find(g->tuple().get());
        if (it != tuples->end()) return it->second.as<TupleNode>()->fields()[static_cast<size_t>(g->index())];
      }
      Expr t = substitute(g->tuple(), map, tuples);
      if (t.same_as(g->tuple())) return e;
      if (const auto* tuple = t.as<TupleNode>()) return tuple->fields()[static_cast<size_t>(g->index())];
      return TupleGetItem::make(t, g->index());
    }
    case ExprKind::kCall: {
      const auto* c = e.as<CallNode>();
      std::vector<Expr> args;
      bool changed = false;
      for (const Expr& a : c->args()) {
        args.push_back(substitute(a, map, tuples));
        changed = changed || !args.back().same_as(a);
      }
      if (!changed) return e;
      Type t = call_keeps_type(c->op()) ? c->type() : infer_call_type(c->op(), args, c->attrs());
      return Call::make(c->op(), std::move(args), c->attrs(), std::move(t));
    }
  }
  return e;
}

void for_each_var(const Expr& e, const std::function<void(const VarNode&)>& f) {
  switch (e.kind()) {
    case ExprKind::kVar:
      f(*e.as<VarNode>());
      return;
    case ExprKind::kConstant:
    case ExprKind::kShapeExpr:
      return;
    case ExprKind::kTuple:
      for (const Expr& x : e.as<TupleNode>()->fields()) for_each_var(x, f);
      return;
    case ExprKind::kTupleGetItem:
      for_each_var(e.as<TupleGetItemNode>()->tuple(), f);
      return;
    case ExprKind::kCall:
      for (const Expr& x : e.as<CallNode>()->args()) for_each_var(x, f);
      return;
  }
}

std::unordered_map<const ExprNode*, int> use_counts(const Function& f) {
  std::unordered_map<const ExprNode*, int> uses;
  auto count = [&](const VarNode& v) { ++uses[&v]; };
  for (const Binding& b : f.bindings()) for_each_var(b.value, count);
  for_each_var(f.result(), count);
  return uses;
}

}  // namespace anvil::graph::passes
