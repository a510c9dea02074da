// storage_flatten: see storage_flatten.h.
#include "anvil/tir/passes/storage_flatten.h"

#include <unordered_map>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {
namespace {

using ir::BufferLoadNode;
using ir::PrimExprNode;

bool is_const(const PrimExpr& e, int64_t v) {
  if (!e.defined()) return false;
  auto c = ir::as_const_int(e);
  return c && *c == v && e.dtype().lanes() == 1;
}

// a * b and a + b without the trivial cases (x * 1, x + 0), promoting like the builders.
PrimExpr mul_(const PrimExpr& a, const PrimExpr& b) {
  if (is_const(b, 1)) return a.dtype().lanes() == 1 && b.dtype().bits() > a.dtype().bits() ? ir::cast(b.dtype(), a) : a;
  if (is_const(a, 1)) return b.dtype().lanes() == 1 && a.dtype().bits() > b.dtype().bits() ? ir::cast(a.dtype(), b) : b;
  if (is_const(a, 0)) return is_const(b, 0) ? a : ir::mul(a, b);
  return ir::mul(a, b);
}
PrimExpr add_(const PrimExpr& a, const PrimExpr& b) {
  if (!a.defined()) return b;
  if (is_const(b, 0) && b.dtype().bits() <= a.dtype().bits()) return a;
  if (is_const(a, 0) && a.dtype().bits() <= b.dtype().bits()) return b;
  return ir::add(a, b);
}

// A scalar index, a Ramp or a Broadcast as (base, stride, lanes).
bool as_affine(const PrimExpr& e, PrimExpr* base, PrimExpr* stride, int* lanes) {
  if (e.dtype().lanes() == 1) {
    *base = e;
    *stride = ir::make_zero(e.dtype());
    *lanes = 1;
    return true;
  }
  if (auto* r = e.as<ir::RampNode>()) {
    *base = r->base();
    *stride = r->stride();
    *lanes = r->lanes();
    return true;
  }
  if (auto* b = e.as<ir::BroadcastNode>()) {
    *base = b->value();
    *stride = ir::make_zero(b->value().dtype());
    *lanes = b->lanes();
    return true;
  }
  return false;
}

class Flattener : public StmtMutator {
 public:
  using StmtMutator::mutate_;

  PrimExpr mutate_(const BufferLoadNode* op) override {
    bool changed = false;
    std::vector<PrimExpr> idx = mutate_exprs(op->indices(), &changed);
    if (already_flat(op->buffer())) {
      return changed ? ir::buffer_load(op->buffer(), std::move(idx)) : ref_of(op);
    }
    return ir::buffer_load(flat_buffer(op->buffer()), {flat_index(op->buffer(), idx)});
  }

  Stmt mutate_(const BufferStoreNode* op) override {
    bool changed = false;
    std::vector<PrimExpr> idx = mutate_exprs(op->indices(), &changed);
    PrimExpr value = mutate_expr(op->value());
    if (already_flat(op->buffer())) {
      if (!changed && value.same_as(op->value())) return ref_of(op);
      return BufferStoreNode::make(op->buffer(), value, std::move(idx));
    }
    return BufferStoreNode::make(flat_buffer(op->buffer()), value, {flat_index(op->buffer(), idx)});
  }

  Stmt mutate_(const AllocateNode* op) override {
    Stmt body = mutate_stmt(op->body());
    bool changed = false;
    std::vector<PrimExpr> extents = mutate_exprs(op->extents(), &changed);
    if (extents.size() != 1) {
      PrimExpr total;
      for (const auto& e : extents) total = total.defined() ? mul_(total, e) : e;
      if (!total.defined()) total = PrimExpr(1);
      extents = {total};
      changed = true;
    }
    if (!changed && body.same_as(op->body())) return ref_of(op);
    return AllocateNode::make(op->buffer_var(), op->dtype(), std::move(extents), op->scope(), body);
  }

 private:
  static bool already_flat(const Buffer& b) {
    return b.ndim() == 1 && b->strides().empty() && (!b->elem_offset().defined() || is_const(b->elem_offset(), 0));
  }

  Buffer flat_buffer(const Buffer& b) {
    auto it = flat_.find(b.get());
    if (it != flat_.end()) return it->second;
    PrimExpr n = b.num_elements();
    if (!b->strides().empty() && b.ndim() > 0) {
      // Strided: the span the strides reach (outermost stride times extent is the usual bound).
      n = mul_(b->strides()[0], b->shape()[0]);
    }
    Buffer flat = Buffer::make(b->data(), b->dtype(), {n}, {}, PrimExpr(), b->name(), b->alignment(), b->scope());
    flat_.emplace(b.get(), flat);
    return flat;
  }

  static PrimExpr flat_index(const Buffer& b, const std::vector<PrimExpr>& idx) {
    size_t nd = idx.size();
    std::vector<PrimExpr> strides(nd);
    if (!b->strides().empty()) {
      strides = b->strides();
    } else if (nd > 0) {
      strides[nd - 1] = PrimExpr(1);
      for (size_t d = nd - 1; d-- > 0;) strides[d] = mul_(strides[d + 1], b->shape()[d + 1]);
    }
    PrimExpr offset = b->elem_offset().defined() && !is_const(b->elem_offset(), 0) ? b->elem_offset() : PrimExpr();
    // Affine form: one Ramp (or scalar) when every index allows it.
    PrimExpr base = offset, stride;
    int lanes = 1;
    bool affine = true;
    for (size_t d = 0; d < nd && affine; ++d) {
      PrimExpr ib, is;
      int l = 1;
      if (!as_affine(idx[d], &ib, &is, &l)) {
        affine = false;
        break;
      }
      if (l > 1) lanes = l;
      base = add_(base, mul_(ib, strides[d]));
      if (!is_const(is, 0)) stride = add_(stride, mul_(is, strides[d]));
    }
    if (affine) {
      if (!base.defined()) base = PrimExpr(0);
      if (lanes == 1) return base;
      if (!stride.defined()) return ir::broadcast(base, lanes);
      if (stride.dtype() != base.dtype()) {
        DataType t = stride.dtype().bits() > base.dtype().bits() ? stride.dtype() : base.dtype();
        base = base.dtype() == t ? base : ir::cast(t, base);
        stride = stride.dtype() == t ? stride : ir::cast(t, stride);
      }
      return ir::ramp(base, stride, lanes);
    }
    PrimExpr flat = offset;
    for (size_t d = 0; d < nd; ++d) flat = add_(flat, mul_(idx[d], strides[d]));
    return flat;
  }

  std::unordered_map<const ir::BufferNode*, Buffer> flat_;
};

}  // namespace

Stmt storage_flatten(const Stmt& body) { return Flattener().mutate_stmt(body); }

PrimFunc storage_flatten(const PrimFunc& f) { return f.with_body(storage_flatten(f->body())); }

}  // namespace anvil::tir::passes
