// Structural equality of expressions (rules in the header).
#include "anvil/ir/structural_equal.h"

#include <cstring>

namespace anvil::ir {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof(double)) == 0; }

}  // namespace

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars) {
  StructuralEqualizer eq(map_free_vars);
  return eq.expr(a, b);
}

void StructuralEqualizer::map_var(const VarNode* a, const VarNode* b) {
  if (auto it = var_l2r_.find(a); it != var_l2r_.end()) var_r2l_.erase(it->second);
  if (auto it = var_r2l_.find(b); it != var_r2l_.end()) var_l2r_.erase(it->second);
  var_l2r_[a] = b;
  var_r2l_[b] = a;
}

bool StructuralEqualizer::define_var(const Var& a, const Var& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.dtype() != b.dtype()) return false;
  map_var(a.get(), b.get());
  return true;
}

bool StructuralEqualizer::var_use(const VarNode* a, const VarNode* b) {
  auto l = var_l2r_.find(a);
  if (l != var_l2r_.end()) return l->second == b;
  if (var_r2l_.count(b)) return false;
  if (a == b) return true;
  if (!map_free_vars_ || a->dtype() != b->dtype()) return false;
  map_var(a, b);
  return true;
}

bool StructuralEqualizer::exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!expr(a[i], b[i])) return false;
  return true;
}

bool StructuralEqualizer::decl_expr(const PrimExpr& a, const PrimExpr& b) {
  auto* va = a.as<VarNode>();
  auto* vb = b.as<VarNode>();
  if (va && vb && !var_l2r_.count(va) && !var_r2l_.count(vb)) return define_var(Var(va), Var(vb));
  return expr(a, b);
}

bool StructuralEqualizer::buffer_fields(const Buffer& a, const Buffer& b, bool declare) {
  const BufferNode *x = a.get(), *y = b.get();
  if (x->dtype() != y->dtype() || x->alignment() != y->alignment() || x->scope() != y->scope() ||
      x->shape().size() != y->shape().size() || x->strides().size() != y->strides().size())
    return false;
  if (declare) {
    if (!define_var(x->data(), y->data())) return false;
    for (size_t i = 0; i < x->shape().size(); ++i)
      if (!decl_expr(x->shape()[i], y->shape()[i])) return false;
    for (size_t i = 0; i < x->strides().size(); ++i)
      if (!decl_expr(x->strides()[i], y->strides()[i])) return false;
    return decl_expr(x->elem_offset(), y->elem_offset());
  }
  return expr(x->data(), y->data()) && exprs(x->shape(), y->shape()) && exprs(x->strides(), y->strides()) &&
         expr(x->elem_offset(), y->elem_offset());
}

bool StructuralEqualizer::define_buffer(const Buffer& a, const Buffer& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (!buffer_fields(a, b, true)) return false;
  if (auto it = buf_l2r_.find(a.get()); it != buf_l2r_.end()) buf_r2l_.erase(it->second);
  if (auto it = buf_r2l_.find(b.get()); it != buf_r2l_.end()) buf_l2r_.erase(it->second);
  buf_l2r_[a.get()] = b.get();
  buf_r2l_[b.get()] = a.get();
  return true;
}

bool StructuralEqualizer::buffer(const Buffer& a, const Buffer& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  auto l = buf_l2r_.find(a.get());
  if (l != buf_l2r_.end()) return l->second == b.get();
  if (buf_r2l_.count(b.get())) return false;
  if (!buffer_fields(a, b, false)) return false;
  buf_l2r_[a.get()] = b.get();
  buf_r2l_[b.get()] = a.get();
  return true;
}

bool StructuralEqualizer::expr(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b) && !map_free_vars_ && var_l2r_.empty() && buf_l2r_.empty()) return true;
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  if (a.kind() != b.kind() || a.dtype() != b.dtype()) return false;
  switch (a.kind()) {
    case ExprKind::kIntImm:
      return a.as<IntImmNode>()->value() == b.as<IntImmNode>()->value();
    case ExprKind::kFloatImm:
      return same_bits(a.as<FloatImmNode>()->value(), b.as<FloatImmNode>()->value());
    case ExprKind::kStringImm:
      return a.as<StringImmNode>()->value() == b.as<StringImmNode>()->value();
    case ExprKind::kVar:
      return var_use(a.as<VarNode>(), b.as<VarNode>());
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)       \
  case ExprKind::k##Name: {                                \
    auto *x = a.as<Name##Node>(), *y = b.as<Name##Node>(); \
    return expr(x->a(), y->a()) && expr(x->b(), y->b());   \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot:
      return expr(a.as<NotNode>()->a(), b.as<NotNode>()->a());
    case ExprKind::kSelect: {
      auto *x = a.as<SelectNode>(), *y = b.as<SelectNode>();
      return expr(x->cond(), y->cond()) && expr(x->true_value(), y->true_value()) &&
             expr(x->false_value(), y->false_value());
    }
    case ExprKind::kCast:
      return expr(a.as<CastNode>()->value(), b.as<CastNode>()->value());
    case ExprKind::kRamp: {
      auto *x = a.as<RampNode>(), *y = b.as<RampNode>();
      return expr(x->base(), y->base()) && expr(x->stride(), y->stride());
    }
    case ExprKind::kBroadcast:
      return expr(a.as<BroadcastNode>()->value(), b.as<BroadcastNode>()->value());
    case ExprKind::kLet: {
      auto *x = a.as<LetNode>(), *y = b.as<LetNode>();
      return expr(x->value(), y->value()) && define_var(x->var(), y->var()) && expr(x->body(), y->body());
    }
    case ExprKind::kCall: {
      auto *x = a.as<CallNode>(), *y = b.as<CallNode>();
      return x->op() == y->op() && exprs(x->args(), y->args());
    }
    case ExprKind::kBufferLoad: {
      auto *x = a.as<BufferLoadNode>(), *y = b.as<BufferLoadNode>();
      return buffer(x->buffer(), y->buffer()) && exprs(x->indices(), y->indices());
    }
  }
  return false;
}

}  // namespace anvil::ir
