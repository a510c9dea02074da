// remove_no_op pass: no-op statements, empty loops and never-read allocations.
#include "anvil/tir/passes/remove_no_op.h"

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

bool is_no_op(const Stmt& s) {
  if (!s.defined()) return true;
  auto* e = s.as<EvaluateNode>();
  return e && (e->value().as<ir::IntImmNode>() || e->value().as<ir::FloatImmNode>() ||
               e->value().as<ir::StringImmNode>() || e->value().as<ir::VarNode>());
}

bool reads(const Stmt& s, const Var& data) {
  bool found = false;
  post_order_visit(s, [&](const ir::PrimExprNode* e) {
    if (e->kind() == ir::ExprKind::kBufferLoad &&
        static_cast<const ir::BufferLoadNode*>(e)->buffer()->data().same_as(data))
      found = true;
  });
  return found;
}

// Replaces stores into buffers on `data` by no-ops.
class DropStores : public StmtMutator {
 public:
  explicit DropStores(Var data) : data_(std::move(data)) {}
  using StmtMutator::mutate_;
  Stmt mutate_(const BufferStoreNode* op) override {
    return op->buffer()->data().same_as(data_) ? evaluate(0) : ref_of(op);
  }
  // Attributes about the removed allocation (storage_alignment) go with it.
  Stmt mutate_(const AttrStmtNode* op) override {
    if (op->node().same_as(data_)) return mutate_stmt(op->body());
    return StmtMutator::mutate_(op);
  }

 private:
  Var data_;
};

class NoOpRemover : public StmtMutator {
 public:
  using StmtMutator::mutate_;

  Stmt mutate_(const EvaluateNode* op) override { return is_no_op(ref_of(op)) ? evaluate(0) : ref_of(op); }

  Stmt mutate_(const ForNode* op) override {
    if (auto ext = ir::as_const_int(op->extent()); ext && *ext <= 0) return evaluate(0);
    Stmt r = StmtMutator::mutate_(op);
    auto* f = r.as<ForNode>();
    return f && is_no_op(f->body()) ? evaluate(0) : r;
  }

  Stmt mutate_(const IfThenElseNode* op) override {
    Stmt then_case = mutate_stmt(op->then_case());
    Stmt else_case = op->else_case().defined() ? mutate_stmt(op->else_case()) : Stmt();
    bool no_then = is_no_op(then_case), no_else = is_no_op(else_case);
    if (no_then && no_else) return evaluate(0);
    if (no_then) return IfThenElseNode::make(ir::logical_not(op->cond()), else_case);
    if (no_else) else_case = Stmt();
    if (then_case.same_as(op->then_case()) && else_case.same_as(op->else_case())) return ref_of(op);
    return IfThenElseNode::make(op->cond(), then_case, else_case);
  }

  Stmt mutate_(const LetStmtNode* op) override {
    Stmt r = StmtMutator::mutate_(op);
    auto* l = r.as<LetStmtNode>();
    return l && is_no_op(l->body()) ? evaluate(0) : r;
  }

  Stmt mutate_(const AttrStmtNode* op) override {
    Stmt r = StmtMutator::mutate_(op);
    auto* a = r.as<AttrStmtNode>();
    return a && is_no_op(a->body()) ? evaluate(0) : r;
  }

  Stmt mutate_(const AllocateNode* op) override {
    if (!reads(op->body(), op->buffer_var())) return mutate_stmt(DropStores(op->buffer_var()).mutate_stmt(op->body()));
    Stmt r = StmtMutator::mutate_(op);
    auto* a = r.as<AllocateNode>();
    return a && is_no_op(a->body()) ? evaluate(0) : r;
  }

  Stmt mutate_(const SeqStmtNode* op) override {
    Stmt r = StmtMutator::mutate_(op);
    auto* s = r.as<SeqStmtNode>();
    if (!s) return r;
    bool clean = true;
    for (const auto& x : s->seq()) clean &= !is_no_op(x) && !x.as<SeqStmtNode>();
    if (clean) return r;
    std::vector<Stmt> kept;
    for (const auto& x : s->seq())
      if (!is_no_op(x)) kept.push_back(x);
    return seq(kept);
  }
};

}  // namespace

Stmt remove_no_op(const Stmt& s) { return NoOpRemover().mutate_stmt(s); }

PrimFunc remove_no_op(const PrimFunc& f) { return NoOpRemover().mutate_func(f); }

}  // namespace anvil::tir::passes
