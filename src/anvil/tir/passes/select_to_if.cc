// select_to_if pass (see the header).
#include "anvil/tir/passes/select_to_if.h"

#include <vector>

#include "anvil/arith/linear.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

void conjuncts(const PrimExpr& c, std::vector<PrimExpr>* out) {
  if (auto* a = c.as<ir::AndNode>()) {
    conjuncts(a->a(), out);
    conjuncts(a->b(), out);
    return;
  }
  out->push_back(c);
}

bool reads_memory(const PrimExpr& e) {
  bool found = false;
  post_order_visit(evaluate(e), [&](const ir::PrimExprNode* n) {
    if (n->kind() == ir::ExprKind::kBufferLoad) found = true;
  });
  return found;
}

// Whether c is an inequality whose sides differ by a linear form with a non-zero coefficient of v.
bool bounds_var(const PrimExpr& c, const Var& v) {
  PrimExpr a, b;
  if (auto* n = c.as<ir::LTNode>()) a = n->a(), b = n->b();
  if (auto* n = c.as<ir::LENode>()) a = n->a(), b = n->b();
  if (auto* n = c.as<ir::GTNode>()) a = n->a(), b = n->b();
  if (auto* n = c.as<ir::GENode>()) a = n->a(), b = n->b();
  if (!a.defined() || a.dtype() != v.dtype() || !arith::is_linear_type(a.dtype())) return false;
  for (const arith::LinearTerm& t : arith::to_linear(a - b).terms)
    if (t.e.same_as(v) && t.k != 0) return true;
  return false;
}

class SelectToIf : public StmtMutator {
 public:
  using StmtMutator::mutate_;

  Stmt mutate_(const ForNode* op) override {
    const bool plain = op->for_kind() == ForKind::kSerial || op->for_kind() == ForKind::kParallel;
    loops_.push_back(plain ? op : nullptr);
    Stmt s = StmtMutator::mutate_(op);
    loops_.pop_back();
    return s;
  }

  Stmt mutate_(const BufferStoreNode* op) override {
    auto* sel = op->value().as<ir::SelectNode>();
    if (sel == nullptr || op->value().dtype().lanes() != 1 || loops_.empty()) return StmtMutator::mutate_(op);
    for (const ForNode* f : loops_)
      if (f == nullptr) return StmtMutator::mutate_(op);
    std::vector<PrimExpr> cs;
    conjuncts(sel->cond(), &cs);
    bool any = false;
    for (const PrimExpr& c : cs) {
      if (reads_memory(c)) return StmtMutator::mutate_(op);
      any = any || bounds_var(c, loops_.back()->loop_var());
    }
    if (!any) return StmtMutator::mutate_(op);
    Stmt then_store = buffer_store(op->buffer(), sel->true_value(), op->indices());
    Stmt else_store = buffer_store(op->buffer(), sel->false_value(), op->indices());
    Stmt s = then_store;
    for (auto it = cs.rbegin(); it != cs.rend(); ++it) s = if_then_else(*it, s, else_store);
    return s;
  }

 private:
  std::vector<const ForNode*> loops_;  // enclosing loops, nullptr for kinds that are left alone
};

}  // namespace

Stmt select_to_if(const Stmt& s) { return SelectToIf().mutate_stmt(s); }

PrimFunc select_to_if(const PrimFunc& f) { return SelectToIf().mutate_func(f); }

}  // namespace anvil::tir::passes
