// Structural hash of expressions (mirrors structural_equal.cc).
#include "anvil/ir/structural_hash.h"

#include <bit>
#include <functional>
#include <string_view>

namespace anvil::ir {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t dtype_hash(DataType t) {
  return (uint64_t{t.code()} << 24) | (uint64_t(t.bits()) << 16) | uint64_t(t.lanes());
}

constexpr uint64_t kDefinedVarTag = 0x1001, kFreeVarTag = 0x1002, kBufferTag = 0x1003, kUndefinedTag = 0x1004;

}  // namespace

uint64_t StructuralHasher::str_hash(std::string_view s) {  // FNV-1a: the same everywhere
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

uint64_t StructuralHasher::combine(uint64_t seed, uint64_t value) {
  return mix(seed ^ (value + 0x632be59bd9b4e019ULL + (seed << 6)));
}

uint64_t structural_hash(const PrimExpr& e, bool map_free_vars) {
  StructuralHasher h(map_free_vars);
  return h.expr(e);
}

uint64_t StructuralHasher::define_var(const Var& v) {
  if (!v.defined()) return kUndefinedTag;
  uint64_t id = next_id_++;
  var_ids_[v.get()] = id;
  return combine(combine(kDefinedVarTag, id), dtype_hash(v.dtype()));
}

uint64_t StructuralHasher::var_use(const VarNode* v) {
  auto it = var_ids_.find(v);
  if (it != var_ids_.end()) return combine(combine(kDefinedVarTag, it->second), dtype_hash(v->dtype()));
  if (map_free_vars_) {
    uint64_t id = next_id_++;
    var_ids_[v] = id;
    return combine(combine(kDefinedVarTag, id), dtype_hash(v->dtype()));
  }
  return combine(kFreeVarTag, std::hash<const void*>()(v));
}

uint64_t StructuralHasher::exprs(const std::vector<PrimExpr>& es) {
  uint64_t h = es.size();
  for (const auto& e : es) h = combine(h, expr(e));
  return h;
}

uint64_t StructuralHasher::decl_expr(const PrimExpr& e) {
  if (auto* v = e.as<VarNode>(); v && !var_ids_.count(v)) return define_var(Var(v));
  return expr(e);
}

uint64_t StructuralHasher::buffer_fields(const Buffer& b, bool declare) {
  const BufferNode* x = b.get();
  uint64_t h = combine(kBufferTag, dtype_hash(x->dtype()));
  h = combine(h, uint64_t(x->alignment()));
  h = combine(h, str_hash(x->scope()));
  if (declare) {
    h = combine(h, define_var(x->data()));
    h = combine(h, x->shape().size());
    for (const auto& d : x->shape()) h = combine(h, decl_expr(d));
    h = combine(h, x->strides().size());
    for (const auto& s : x->strides()) h = combine(h, decl_expr(s));
    return combine(h, decl_expr(x->elem_offset()));
  }
  h = combine(h, expr(x->data()));
  h = combine(h, exprs(x->shape()));
  h = combine(h, exprs(x->strides()));
  return combine(h, expr(x->elem_offset()));
}

uint64_t StructuralHasher::buffer(const Buffer& b) { return b.defined() ? buffer_fields(b, false) : kUndefinedTag; }
uint64_t StructuralHasher::define_buffer(const Buffer& b) {
  return b.defined() ? buffer_fields(b, true) : kUndefinedTag;
}

uint64_t StructuralHasher::expr(const PrimExpr& e) {
  if (!e.defined()) return kUndefinedTag;
  uint64_t h = combine(static_cast<uint64_t>(e.kind()) + 1, dtype_hash(e.dtype()));
  switch (e.kind()) {
    case ExprKind::kIntImm:
      return combine(h, static_cast<uint64_t>(e.as<IntImmNode>()->value()));
    case ExprKind::kFloatImm:
      return combine(h, std::bit_cast<uint64_t>(e.as<FloatImmNode>()->value()));
    case ExprKind::kStringImm:
      return combine(h, str_hash(e.as<StringImmNode>()->value()));
    case ExprKind::kVar:
      return combine(h, var_use(e.as<VarNode>()));
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) \
  case ExprKind::k##Name: {                          \
    auto* x = e.as<Name##Node>();                    \
    h = combine(h, expr(x->a()));                    \
    return combine(h, expr(x->b()));                 \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot:
      return combine(h, expr(e.as<NotNode>()->a()));
    case ExprKind::kSelect: {
      auto* x = e.as<SelectNode>();
      h = combine(h, expr(x->cond()));
      h = combine(h, expr(x->true_value()));
      return combine(h, expr(x->false_value()));
    }
    case ExprKind::kCast:
      return combine(h, expr(e.as<CastNode>()->value()));
    case ExprKind::kRamp: {
      auto* x = e.as<RampNode>();
      h = combine(h, expr(x->base()));
      return combine(h, expr(x->stride()));
    }
    case ExprKind::kBroadcast:
      return combine(h, expr(e.as<BroadcastNode>()->value()));
    case ExprKind::kLet: {
      auto* x = e.as<LetNode>();
      h = combine(h, expr(x->value()));
      h = combine(h, define_var(x->var()));
      return combine(h, expr(x->body()));
    }
    case ExprKind::kCall: {
      auto* x = e.as<CallNode>();
      h = combine(h, static_cast<uint64_t>(x->op()));
      return combine(h, exprs(x->args()));
    }
    case ExprKind::kBufferLoad: {
      auto* x = e.as<BufferLoadNode>();
      h = combine(h, buffer(x->buffer()));
      return combine(h, exprs(x->indices()));
    }
  }
  return h;
}

}  // namespace anvil::ir
