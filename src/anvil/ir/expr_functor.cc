// Expression visitor, mutator and substitution.
#include "anvil/ir/expr_functor.h"

#include "anvil/base/error.h"

namespace anvil::ir {

// ---- visitor ------------------------------------------------------------------------------

void ExprVisitor::visit_expr(const PrimExpr& e) {
  if (!e.defined()) return;
  switch (e.kind()) {
#define ANVIL_EXPR_KIND(Name)                        \
  case ExprKind::k##Name:                            \
    visit_(static_cast<const Name##Node*>(e.get())); \
    return;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
  }
}

void ExprVisitor::visit_(const IntImmNode*) {}
void ExprVisitor::visit_(const FloatImmNode*) {}
void ExprVisitor::visit_(const StringImmNode*) {}
void ExprVisitor::visit_(const VarNode*) {}
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) \
  void ExprVisitor::visit_(const Name##Node* op) {   \
    visit_expr(op->a());                             \
    visit_expr(op->b());                             \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
void ExprVisitor::visit_(const NotNode* op) { visit_expr(op->a()); }
void ExprVisitor::visit_(const SelectNode* op) {
  visit_expr(op->cond());
  visit_expr(op->true_value());
  visit_expr(op->false_value());
}
void ExprVisitor::visit_(const CastNode* op) { visit_expr(op->value()); }
void ExprVisitor::visit_(const RampNode* op) {
  visit_expr(op->base());
  visit_expr(op->stride());
}
void ExprVisitor::visit_(const BroadcastNode* op) { visit_expr(op->value()); }
void ExprVisitor::visit_(const LetNode* op) {
  visit_expr(op->value());
  visit_expr(op->body());
}
void ExprVisitor::visit_(const CallNode* op) {
  for (const auto& a : op->args()) visit_expr(a);
}
void ExprVisitor::visit_(const BufferLoadNode* op) {
  for (const auto& i : op->indices()) visit_expr(i);
}

// ---- mutator ------------------------------------------------------------------------------

PrimExpr ExprMutator::mutate_expr(const PrimExpr& e) {
  if (!e.defined()) return e;
  switch (e.kind()) {
#define ANVIL_EXPR_KIND(Name) \
  case ExprKind::k##Name:     \
    return mutate_(static_cast<const Name##Node*>(e.get()));
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
  }
  ANVIL_ICHECK(false, "unknown expression kind ", static_cast<int>(e.kind()));
  return e;
}

std::vector<PrimExpr> ExprMutator::mutate_exprs(const std::vector<PrimExpr>& exprs, bool* changed) {
  std::vector<PrimExpr> out;
  out.reserve(exprs.size());
  bool any = false;
  for (const auto& e : exprs) {
    out.push_back(mutate_expr(e));
    any = any || !out.back().same_as(e);
  }
  if (any) *changed = true;
  return any ? out : exprs;
}

PrimExpr ExprMutator::mutate_(const IntImmNode* op) { return ref_of(op); }
PrimExpr ExprMutator::mutate_(const FloatImmNode* op) { return ref_of(op); }
PrimExpr ExprMutator::mutate_(const StringImmNode* op) { return ref_of(op); }
PrimExpr ExprMutator::mutate_(const VarNode* op) { return ref_of(op); }
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                 \
  PrimExpr ExprMutator::mutate_(const Name##Node* op) {              \
    PrimExpr a = mutate_expr(op->a()), b = mutate_expr(op->b());     \
    if (a.same_as(op->a()) && b.same_as(op->b())) return ref_of(op); \
    return Name##Node::make(std::move(a), std::move(b));             \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND

PrimExpr ExprMutator::mutate_(const NotNode* op) {
  PrimExpr a = mutate_expr(op->a());
  return a.same_as(op->a()) ? ref_of(op) : NotNode::make(std::move(a));
}
PrimExpr ExprMutator::mutate_(const SelectNode* op) {
  PrimExpr c = mutate_expr(op->cond()), t = mutate_expr(op->true_value()), f = mutate_expr(op->false_value());
  if (c.same_as(op->cond()) && t.same_as(op->true_value()) && f.same_as(op->false_value())) return ref_of(op);
  return SelectNode::make(std::move(c), std::move(t), std::move(f));
}
PrimExpr ExprMutator::mutate_(const CastNode* op) {
  PrimExpr v = mutate_expr(op->value());
  return v.same_as(op->value()) ? ref_of(op) : CastNode::make(op->dtype(), std::move(v));
}
PrimExpr ExprMutator::mutate_(const RampNode* op) {
  PrimExpr b = mutate_expr(op->base()), s = mutate_expr(op->stride());
  if (b.same_as(op->base()) && s.same_as(op->stride())) return ref_of(op);
  return RampNode::make(std::move(b), std::move(s), op->lanes());
}
PrimExpr ExprMutator::mutate_(const BroadcastNode* op) {
  PrimExpr v = mutate_expr(op->value());
  return v.same_as(op->value()) ? ref_of(op) : BroadcastNode::make(std::move(v), op->lanes());
}
PrimExpr ExprMutator::mutate_(const LetNode* op) {
  PrimExpr v = mutate_expr(op->value()), b = mutate_expr(op->body());
  if (v.same_as(op->value()) && b.same_as(op->body())) return ref_of(op);
  return LetNode::make(op->var(), std::move(v), std::move(b));
}
PrimExpr ExprMutator::mutate_(const CallNode* op) {
  bool changed = false;
  std::vector<PrimExpr> args = mutate_exprs(op->args(), &changed);
  return changed ? CallNode::make(op->op(), std::move(args)) : ref_of(op);
}
PrimExpr ExprMutator::mutate_(const BufferLoadNode* op) {
  bool changed = false;
  std::vector<PrimExpr> idx = mutate_exprs(op->indices(), &changed);
  Buffer buf = mutate_buffer(op->buffer());
  if (!changed && buf.same_as(op->buffer())) return ref_of(op);
  return BufferLoadNode::make(std::move(buf), std::move(idx));
}

// ---- substitution -------------------------------------------------------------------------

PrimExpr SubstituteMutator::mutate_(const VarNode* op) {
  if (auto r = fn_(Var(op))) return *r;
  return ref_of(op);
}

Buffer SubstituteMutator::mutate_buffer(const Buffer& buffer) {
  if (!buffer.defined()) return buffer;
  auto it = buffers_.find(buffer.get());
  if (it != buffers_.end()) return it->second;
  const BufferNode* b = buffer.get();
  bool changed = false;
  std::vector<PrimExpr> shape = mutate_exprs(b->shape(), &changed);
  std::vector<PrimExpr> strides = mutate_exprs(b->strides(), &changed);
  PrimExpr offset = mutate_expr(b->elem_offset());
  PrimExpr data = mutate_expr(b->data());
  changed = changed || !offset.same_as(b->elem_offset()) || !data.same_as(b->data());
  Buffer out = buffer;
  if (changed) {
    const VarNode* dv = data.as<VarNode>();
    if (!dv)
      type_error("substitute: buffer ", b->name(), "'s data var must map to a Var, got ", expr_kind_name(data.kind()));
    out = Buffer::make(Var(dv), b->dtype(), std::move(shape), std::move(strides), std::move(offset), b->name(),
                       b->alignment(), b->scope());
  }
  buffers_.emplace(buffer.get(), out);
  return out;
}

PrimExpr substitute(const PrimExpr& e, const std::function<std::optional<PrimExpr>(const Var&)>& fn) {
  SubstituteMutator m(fn);
  return m.mutate_expr(e);
}

PrimExpr substitute(const PrimExpr& e, const VarMap& map) {
  if (map.empty()) return e;
  return substitute(e, [&map](const Var& v) -> std::optional<PrimExpr> {
    auto it = map.find(v);
    if (it == map.end()) return std::nullopt;
    return it->second;
  });
}

}  // namespace anvil::ir
