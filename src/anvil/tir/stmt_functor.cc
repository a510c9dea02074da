// Statement visitor, mutator and substitution.
#include "anvil/tir/stmt_functor.h"

#include "anvil/base/error.h"

namespace anvil::tir {

// ---- visitor ------------------------------------------------------------------------------

void StmtVisitor::visit_stmt(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
#define ANVIL_STMT_KIND(Name)                        \
  case StmtKind::k##Name:                            \
    visit_(static_cast<const Name##Node*>(s.get())); \
    return;
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
  }
}

void StmtVisitor::visit_(const ForNode* op) {
  visit_expr(op->min());
  visit_expr(op->extent());
  for (const auto& [key, value] : op->annotations()) visit_expr(value);
  visit_stmt(op->body());
}
void StmtVisitor::visit_(const BufferStoreNode* op) {
  visit_expr(op->value());
  for (const auto& i : op->indices()) visit_expr(i);
}
void StmtVisitor::visit_(const AllocateNode* op) {
  for (const auto& e : op->extents()) visit_expr(e);
  visit_stmt(op->body());
}
void StmtVisitor::visit_(const LetStmtNode* op) {
  visit_expr(op->value());
  visit_stmt(op->body());
}
void StmtVisitor::visit_(const IfThenElseNode* op) {
  visit_expr(op->cond());
  visit_stmt(op->then_case());
  visit_stmt(op->else_case());
}
void StmtVisitor::visit_(const SeqStmtNode* op) {
  for (const auto& s : op->seq()) visit_stmt(s);
}
void StmtVisitor::visit_(const EvaluateNode* op) { visit_expr(op->value()); }
void StmtVisitor::visit_(const AttrStmtNode* op) {
  visit_expr(op->node());
  visit_expr(op->value());
  visit_stmt(op->body());
}
void StmtVisitor::visit_(const AssertStmtNode* op) {
  visit_expr(op->condition());
  for (const auto& a : op->message_args()) visit_expr(a);
  visit_stmt(op->body());
}

// ---- mutator ------------------------------------------------------------------------------

Stmt StmtMutator::mutate_stmt(const Stmt& s) {
  if (!s.defined()) return s;
  switch (s.kind()) {
#define ANVIL_STMT_KIND(Name) \
  case StmtKind::k##Name:     \
    return mutate_(static_cast<const Name##Node*>(s.get()));
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
  }
  ANVIL_ICHECK(false, "unknown statement kind ", static_cast<int>(s.kind()));
  return s;
}

PrimFunc StmtMutator::mutate_func(const PrimFunc& f) {
  Stmt body = mutate_stmt(f->body());
  return body.same_as(f->body()) ? f : f.with_body(std::move(body));
}

Stmt StmtMutator::mutate_(const ForNode* op) {
  PrimExpr min = mutate_expr(op->min()), extent = mutate_expr(op->extent());
  bool changed = !min.same_as(op->min()) || !extent.same_as(op->extent());
  Annotations ann = op->annotations();
  for (auto& [key, value] : ann) {
    PrimExpr v = mutate_expr(value);
    if (!v.same_as(value)) {
      value = std::move(v);
      changed = true;
    }
  }
  Stmt body = mutate_stmt(op->body());
  if (!changed && body.same_as(op->body())) return ref_of(op);
  return ForNode::make(op->loop_var(), std::move(min), std::move(extent), op->for_kind(), std::move(body),
                       op->thread_tag(), std::move(ann));
}

Stmt StmtMutator::mutate_(const BufferStoreNode* op) {
  PrimExpr value = mutate_expr(op->value());
  bool changed = !value.same_as(op->value());
  std::vector<PrimExpr> idx = mutate_exprs(op->indices(), &changed);
  Buffer buf = mutate_buffer(op->buffer());
  if (!changed && buf.same_as(op->buffer())) return ref_of(op);
  return BufferStoreNode::make(std::move(buf), std::move(value), std::move(idx));
}

Stmt StmtMutator::mutate_(const AllocateNode* op) {
  bool changed = false;
  std::vector<PrimExpr> extents = mutate_exprs(op->extents(), &changed);
  Stmt body = mutate_stmt(op->body());
  if (!changed && body.same_as(op->body())) return ref_of(op);
  return AllocateNode::make(op->buffer_var(), op->dtype(), std::move(extents), op->scope(), std::move(body));
}

Stmt StmtMutator::mutate_(const LetStmtNode* op) {
  PrimExpr value = mutate_expr(op->value());
  Stmt body = mutate_stmt(op->body());
  if (value.same_as(op->value()) && body.same_as(op->body())) return ref_of(op);
  return LetStmtNode::make(op->var(), std::move(value), std::move(body));
}

Stmt StmtMutator::mutate_(const IfThenElseNode* op) {
  PrimExpr cond = mutate_expr(op->cond());
  Stmt t = mutate_stmt(op->then_case()), e = mutate_stmt(op->else_case());
  if (cond.same_as(op->cond()) && t.same_as(op->then_case()) && e.same_as(op->else_case())) return ref_of(op);
  return IfThenElseNode::make(std::move(cond), std::move(t), std::move(e));
}

Stmt StmtMutator::mutate_(const SeqStmtNode* op) {
  std::vector<Stmt> out;
  out.reserve(op->size());
  bool changed = false;
  for (const auto& s : op->seq()) {
    out.push_back(mutate_stmt(s));
    changed = changed || !out.back().same_as(s);
  }
  if (!changed) return ref_of(op);
  return seq(std::move(out));  // flattens sequences a mutation produced
}

Stmt StmtMutator::mutate_(const EvaluateNode* op) {
  PrimExpr v = mutate_expr(op->value());
  return v.same_as(op->value()) ? ref_of(op) : EvaluateNode::make(std::move(v));
}

Stmt StmtMutator::mutate_(const AttrStmtNode* op) {
  PrimExpr node = mutate_expr(op->node()), value = mutate_expr(op->value());
  Stmt body = mutate_stmt(op->body());
  if (node.same_as(op->node()) && value.same_as(op->value()) && body.same_as(op->body())) return ref_of(op);
  return AttrStmtNode::make(op->key(), std::move(node), std::move(value), std::move(body));
}

Stmt StmtMutator::mutate_(const AssertStmtNode* op) {
  PrimExpr cond = mutate_expr(op->condition());
  bool changed = !cond.same_as(op->condition());
  std::vector<PrimExpr> args = mutate_exprs(op->message_args(), &changed);
  Stmt body = mutate_stmt(op->body());
  if (!changed && body.same_as(op->body())) return ref_of(op);
  return AssertStmtNode::make(std::move(cond), op->message(), std::move(body), std::move(args));
}

// ---- substitution -------------------------------------------------------------------------

namespace {

// ir::SubstituteMutator's expression and buffer rules, applied through statements.
class StmtSubstituter : public StmtMutator {
 public:
  explicit StmtSubstituter(const std::function<std::optional<PrimExpr>(const Var&)>& fn) : exprs_(fn) {}
  PrimExpr mutate_expr(const PrimExpr& e) override { return exprs_.mutate_expr(e); }
  Buffer mutate_buffer(const Buffer& b) override { return exprs_.mutate_buffer(b); }

 private:
  ir::SubstituteMutator exprs_;
};

}  // namespace

Stmt substitute(const Stmt& s, const std::function<std::optional<PrimExpr>(const Var&)>& fn) {
  StmtSubstituter m(fn);
  return m.mutate_stmt(s);
}

Stmt substitute(const Stmt& s, const ir::VarMap& map) {
  if (map.empty()) return s;
  return substitute(s, [&map](const Var& v) -> std::optional<PrimExpr> {
    auto it = map.find(v);
    if (it == map.end()) return std::nullopt;
    return it->second;
  });
}

void post_order_visit(const Stmt& s, const std::function<void(const ir::PrimExprNode*)>& on_expr,
                      const std::function<void(const StmtNode*)>& on_stmt) {
  class Walker : public StmtVisitor {
   public:
    Walker(const std::function<void(const ir::PrimExprNode*)>& e, const std::function<void(const StmtNode*)>& s)
        : on_expr_(e), on_stmt_(s) {}
    void visit_expr(const PrimExpr& e) override {
      if (!e.defined()) return;
      StmtVisitor::visit_expr(e);
      if (on_expr_) on_expr_(e.get());
    }
    void visit_stmt(const Stmt& s) override {
      if (!s.defined()) return;
      StmtVisitor::visit_stmt(s);
      if (on_stmt_) on_stmt_(s.get());
    }

   private:
    const std::function<void(const ir::PrimExprNode*)>& on_expr_;
    const std::function<void(const StmtNode*)>& on_stmt_;
  };
  Walker w(on_expr, on_stmt);
  w.visit_stmt(s);
}

}  // namespace anvil::tir
