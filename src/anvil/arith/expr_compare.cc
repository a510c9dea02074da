// Structural order of expressions.
#include "anvil/arith/expr_compare.h"

#include <cstring>

#include "anvil/ir/buffer.h"

namespace anvil::arith {

using namespace ir;  // NOLINT(google-build-using-namespace): node classes

namespace {

template <typename T>
int cmp3(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

int compare_named(const std::string& na, const void* pa, const std::string& nb, const void* pb) {
  if (pa == pb) return 0;
  if (int c = na.compare(nb)) return c < 0 ? -1 : 1;
  return std::less<const void*>()(pa, pb) ? -1 : 1;
}

int compare_list(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b) {
  if (int c = cmp3(a.size(), b.size())) return c;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = compare_expr(a[i], b[i])) return c;
  return 0;
}

}  // namespace

int compare_expr(const PrimExpr& a, const PrimExpr& b) {
  if (a.same_as(b)) return 0;
  if (!a.defined() || !b.defined()) return a.defined() ? 1 : -1;
  if (int c = cmp3(static_cast<int>(a.kind()), static_cast<int>(b.kind()))) return c;
  DataType ta = a.dtype(), tb = b.dtype();
  if (int c = cmp3(ta.code(), tb.code())) return c;
  if (int c = cmp3(ta.bits(), tb.bits())) return c;
  if (int c = cmp3(ta.lanes(), tb.lanes())) return c;
  switch (a.kind()) {
    case ExprKind::kIntImm: return cmp3(a.as<IntImmNode>()->value(), b.as<IntImmNode>()->value());
    case ExprKind::kFloatImm: {
      double x = a.as<FloatImmNode>()->value(), y = b.as<FloatImmNode>()->value();
      uint64_t bx = 0, by = 0;
      std::memcpy(&bx, &x, sizeof x);
      std::memcpy(&by, &y, sizeof y);
      return cmp3(bx, by);
    }
    case ExprKind::kStringImm: return cmp3(a.as<StringImmNode>()->value(), b.as<StringImmNode>()->value());
    case ExprKind::kVar: {
      auto* x = a.as<VarNode>();
      auto* y = b.as<VarNode>();
      return compare_named(x->name(), x, y->name(), y);
    }
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                                  \
  case ExprKind::k##Name: {                                                           \
    auto* x = a.as<Name##Node>();                                                     \
    auto* y = b.as<Name##Node>();                                                     \
    if (int c = compare_expr(x->a(), y->a())) return c;                               \
    return compare_expr(x->b(), y->b());                                              \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot: return compare_expr(a.as<NotNode>()->a(), b.as<NotNode>()->a());
    case ExprKind::kSelect: {
      auto* x = a.as<SelectNode>();
      auto* y = b.as<SelectNode>();
      return compare_list({x->cond(), x->true_value(), x->false_value()}, {y->cond(), y->true_value(), y->false_value()});
    }
    case ExprKind::kCast: return compare_expr(a.as<CastNode>()->value(), b.as<CastNode>()->value());
    case ExprKind::kRamp: {
      auto* x = a.as<RampNode>();
      auto* y = b.as<RampNode>();
      return compare_list({x->base(), x->stride()}, {y->base(), y->stride()});
    }
    case ExprKind::kBroadcast: return compare_expr(a.as<BroadcastNode>()->value(), b.as<BroadcastNode>()->value());
    case ExprKind::kLet: {
      auto* x = a.as<LetNode>();
      auto* y = b.as<LetNode>();
      return compare_list({x->var(), x->value(), x->body()}, {y->var(), y->value(), y->body()});
    }
    case ExprKind::kCall: {
      auto* x = a.as<CallNode>();
      auto* y = b.as<CallNode>();
      if (int c = cmp3(static_cast<int>(x->op()), static_cast<int>(y->op()))) return c;
      return compare_list(x->args(), y->args());
    }
    case ExprKind::kBufferLoad: {
      auto* x = a.as<BufferLoadNode>();
      auto* y = b.as<BufferLoadNode>();
      if (int c = compare_named(x->buffer()->name(), x->buffer().get(), y->buffer()->name(), y->buffer().get()))
        return c;
      return compare_list(x->indices(), y->indices());
    }
  }
  return 0;
}

}  // namespace anvil::arith
