// The heap topk kernel (topk.h).
#include "anvil/ops/cpu/topk.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/hand_kernel.h"
#include "anvil/ops/cpu/vector_width.h"

namespace anvil::ops {

using hand::at;
using hand::put;
using ir::Buffer;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using tir::Stmt;

namespace {

// Vectors per prefilter block (a block is vector lanes x this many elements).
constexpr int kBlockVectors = 8;
// Rows along a non-last axis are carried a vector of inner positions at a time up to this k.
constexpr int64_t kCarriedMaxK = 64;
// Sift-down levels when k is symbolic: a heap of fewer than 2^31 pairs is shallower.
constexpr int kSymbolicLevels = 31;

}  // namespace

tir::Stmt topk_kernel(const graph::CallNode& call, const std::vector<Buffer>& inputs,
                      const std::vector<Buffer>& outputs, const Target& target) {
  const Buffer& xb = inputs[0];
  const std::vector<PrimExpr>& shape = xb->shape();
  const int ndim = xb->ndim();
  if (ndim == 0) value_error("topk: the input is 0-d; it needs an axis to select along");
  const int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", -1), ndim);
  const bool largest = graph::get_int(call.attrs(), "largest", 1) != 0;
  Buffer x = hand::flat(xb), values = hand::flat(outputs[0]), indices = hand::flat(outputs[1]);
  const DataType out = outputs[0]->dtype(), acc = compute_dtype(xb->dtype()), it = shape[axis].dtype();
  PrimExpr outer = hand::extent_product(shape, 0, axis, it), n = ir::cast(it, shape[axis]);
  PrimExpr inner = hand::extent_product(shape, axis + 1, ndim, it);
  PrimExpr k = ir::cast(it, outputs[0]->shape()[axis]);
  std::optional<int64_t> k_c = ir::as_const_int(k), n_c = ir::as_const_int(n), inner_c = ir::as_const_int(inner);
  if (k_c && *k_c == 0) return tir::evaluate(0);
  if (k_c && n_c && *k_c > *n_c) value_error("topk: k = ", *k_c, " is larger than the axis length ", *n_c);

  // a strictly beats b by value; (av, ai) comes before (bv, bi) in the output order.
  auto beats = [&](const PrimExpr& a, const PrimExpr& b) { return largest ? a > b : a < b; };
  auto before = [&](const PrimExpr& av, const PrimExpr& ai, const PrimExpr& bv, const PrimExpr& bi) {
    return beats(av, bv) || (ir::eq(av, bv) && ai < bi);
  };
  const PrimExpr zero = ir::int_imm(0, it);
  // The heaps' values and indices: set per kernel part below (the lambdas read them then).
  Buffer hv, hi;
  Buffer pos = hand::local(ir::int_imm(1, it), it, "topk_pos"), done = hand::local(ir::int_imm(1, it), it, "topk_done");
  // Every move goes one level down, so floor(log2 k) levels reach a leaf.
  const int levels = k_c ? static_cast<int>(std::bit_width(static_cast<uint64_t>(*k_c))) - 1 : kSymbolicLevels;

  // The heap of one row lives at [base, base + k) of hv/hi (several rows' heaps side by side
  // when rows are carried together). Places (v, vi) in the heap's slots [0, size) whose slot
  // `start` is free: while the later of start's children comes after (v, vi) it moves up.
  auto sift_down = [&](const PrimExpr& base, const PrimExpr& start, const PrimExpr& size, const PrimExpr& v,
                       const PrimExpr& vi) {
    Var c("c", it), c1("c1", it), m("m", it), level("level", it);
    auto hvs = [&](const PrimExpr& slot) { return at(hv, base + slot); };
    auto his = [&](const PrimExpr& slot) { return at(hi, base + slot); };
    PrimExpr p = at(pos, zero);
    Stmt move = tir::if_then_else(before(v, vi, hvs(m), his(m)),
                                  tir::seq({put(hv, base + p, hvs(m)), put(hi, base + p, his(m)), put(pos, zero, m)}),
                                  put(done, zero, ir::int_imm(1, it)));
    // c1 is c itself when c is the last slot (then m = c).
    Stmt step = tir::let_stmt(
        c, p * 2 + 1,
        tir::if_then_else(c < size,
                          tir::let_stmt(c1, ir::min(c + 1, size - 1),
                                        tir::let_stmt(m, ir::select(before(hvs(c), his(c), hvs(c1), his(c1)), c1, c), move)),
                          put(done, zero, ir::int_imm(1, it))));
    std::vector<Stmt> s = {put(pos, zero, start), put(done, zero, zero)};
    if (levels > 0) s.push_back(tir::make_for(level, 0, levels, tir::if_then_else(ir::eq(at(done, zero), zero), step)));
    s.push_back(put(hv, base + at(pos, zero), v));
    s.push_back(put(hi, base + at(pos, zero), vi));
    return tir::seq(s);
  };
  using Index = std::function<PrimExpr(const PrimExpr&)>;
  // The first k elements of a row (flat index element(q)), heapified from the last internal slot up.
  auto build_heap = [&](const PrimExpr& base, const Index& element) {
    Var j("j", it), t("t", it), s("s", it), v("v", acc), vi("vi", it);
    PrimExpr half = ir::floordiv(k, 2);
    return tir::seq(
        {tir::make_for(j, 0, k, tir::seq({put(hv, base + j, convert(acc, at(x, element(j)))), put(hi, base + j, j)})),
         tir::make_for(t, 0, half,
                       tir::let_stmt(s, half - 1 - t,
                                     tir::let_stmt(v, at(hv, base + s),
                                                   tir::let_stmt(vi, at(hi, base + s), sift_down(base, s, k, v, vi)))))});
  };
  // Element q with value xv replaces the root when it beats it (a later index never wins a tie).
  auto offer = [&](const PrimExpr& base, const PrimExpr& xv, const PrimExpr& q) {
    return tir::if_then_else(beats(xv, at(hv, base)), sift_down(base, zero, k, xv, q));
  };
  auto consider = [&](const PrimExpr& base, const Index& element, const PrimExpr& q) {
    Var xv("xv", acc);
    return tir::let_stmt(xv, convert(acc, at(x, element(q))), offer(base, xv, q));
  };
  // Heapsort (the root, the pair that comes last, to the end of the shrinking heap), then the
  // row's k outputs at flat indices dst(w).
  auto sort_and_write = [&](const PrimExpr& base, const Index& dst) {
    Var t("t", it), s("s", it), v("v", acc), vi("vi", it), w("w", it);
    return tir::seq(
        {tir::make_for(t, 0, k - 1,
                       tir::let_stmt(s, k - 1 - t,
                                     tir::let_stmt(v, at(hv, base + s),
                                                   tir::let_stmt(vi, at(hi, base + s),
                                                                 tir::seq({put(hv, base + s, at(hv, base)),
                                                                           put(hi, base + s, at(hi, base)),
                                                                           sift_down(base, zero, s, v, vi)}))))),
         tir::make_for(w, 0, k,
                       tir::seq({put(values, dst(w), convert(out, at(hv, base + w))),
                                 put(indices, dst(w), ir::cast(DataType::int64(), at(hi, base + w)))}))});
  };
  auto pick = [&](const PrimExpr& a, const PrimExpr& c) { return largest ? ir::max(a, c) : ir::min(a, c); };
  const int lanes = std::max(1, vector_lanes_of(target) * 4 / std::max(1, acc.bits() / 8));
  const bool contiguous = inner_c && *inner_c == 1;
  std::vector<Stmt> parts;

  // Rows along a non-last axis, `width` consecutive inner positions at a time (each its own heap):
  // one contiguous vector load per axis index, compared with the width roots, so a position is
  // looked at alone only when its element beats its root. For a constant inner extent of two or
  // more and k up to kCarriedMaxK (the heaps stay small); the other positions go row by row.
  int64_t width = inner_c && *inner_c > 1 && k_c && *k_c <= kCarriedMaxK ? std::min<int64_t>(lanes, *inner_c) : 0;
  int64_t carried = width ? *inner_c / width * width : 0;
  if (width) {
    Var r("r", it), l("l", it), q("q", it);
    const int64_t nblk = *inner_c / width;
    hv = hand::local(ir::int_imm(width * *k_c, it), acc, "topk_heap_values");
    hi = hand::local(ir::int_imm(width * *k_c, it), it, "topk_heap_indices");
    PrimExpr o = ir::floordiv(r, ir::int_imm(nblk, it)), i0 = ir::floormod(r, ir::int_imm(nblk, it)) * width;
    Buffer cand = hand::local(ir::int_imm(width, it), acc, "topk_candidates");
    auto element_of = [&](const PrimExpr& lane) {
      return Index([&, lane](const PrimExpr& e) { return (o * n + e) * inner + i0 + lane; });
    };
    PrimExpr any;
    for (int64_t c = 0; c < width; ++c) {
      PrimExpr b = beats(at(cand, ir::int_imm(c, it)), at(hv, ir::int_imm(c * *k_c, it)));
      any = any.defined() ? (any || b) : b;
    }
    Var xv("xv", acc);
    Stmt scan = tir::make_for(
        q, k, n - k,
        tir::seq({tir::make_for(l, 0, ir::int_imm(width, it), put(cand, l, convert(acc, at(x, element_of(l)(q)))), tir::ForKind::kVectorized),
                  tir::if_then_else(any, tir::make_for(l, 0, ir::int_imm(width, it), tir::let_stmt(xv, at(cand, l), offer(l * k, xv, q))))}));
    Stmt body = tir::seq({tir::make_for(l, 0, ir::int_imm(width, it), build_heap(l * k, element_of(l))), scan,
                          tir::make_for(l, 0, ir::int_imm(width, it), sort_and_write(l * k, [&](const PrimExpr& w) {
                                          return (o * k + w) * inner + i0 + l;
                                        }))});
    for (const Buffer& b : {hv, hi, cand, pos, done}) body = hand::with_local(b, body);
    parts.push_back(tir::make_for(r, 0, outer * ir::int_imm(nblk, it), body, tir::ForKind::kParallel));
  }

  // Row by row: every row when the axis is innermost or inner is symbolic, else the inner
  // positions from `carried` on.
  {
    Var r("r", it);
    hv = hand::local(k, acc, "topk_heap_values");
    hi = hand::local(k, it, "topk_heap_indices");
    PrimExpr per_outer = inner_c ? ir::int_imm(*inner_c - carried, it) : inner;
    PrimExpr o = contiguous ? PrimExpr(r) : ir::floordiv(r, per_outer);
    PrimExpr i = contiguous ? zero : ir::int_imm(carried, it) + ir::floormod(r, per_outer);
    Index element = [&](const PrimExpr& q) { return contiguous ? o * n + q : (o * n + q) * inner + i; };
    std::vector<Stmt> row = {build_heap(zero, element)};
    std::vector<Buffer> block_locals;
    PrimExpr scanned = k;  // elements before the scalar tail
    if (contiguous && lanes > 1) {
      // Blocks of kBlockVectors vectors reduced to their best element first.
      const int span = lanes * kBlockVectors;
      PrimExpr blocks = k_c && n_c ? ir::int_imm((*n_c - *k_c) / span, it) : ir::floordiv(n - k, span);
      Var b("b", it), l("l", it), g("g", it), e("e", it);
      PrimExpr base = k + b * span;
      Buffer best = hand::local(ir::int_imm(lanes, it), acc, "topk_block_best");
      block_locals.push_back(best);
      Stmt first =
          tir::make_for(l, 0, lanes, put(best, l, convert(acc, at(x, element(base + l)))), tir::ForKind::kVectorized);
      Stmt rest = tir::make_for(
          g, 1, kBlockVectors - 1,
          tir::make_for(l, 0, lanes, put(best, l, pick(at(best, l), convert(acc, at(x, element(base + g * lanes + l))))),
                        tir::ForKind::kVectorized));
      std::vector<PrimExpr> tree;
      for (int c = 0; c < lanes; ++c) tree.push_back(at(best, ir::int_imm(c, it)));
      while (tree.size() > 1) {
        std::vector<PrimExpr> next;
        for (size_t c = 0; c + 1 < tree.size(); c += 2) next.push_back(pick(tree[c], tree[c + 1]));
        if (tree.size() % 2) next.push_back(tree.back());
        tree = std::move(next);
      }
      Stmt search = tir::if_then_else(beats(tree[0], at(hv, zero)), tir::make_for(e, 0, span, consider(zero, element, base + e)));
      row.push_back(tir::make_for(b, 0, blocks, tir::seq({first, rest, search})));
      scanned = k + blocks * span;
    }
    Var q("q", it);
    row.push_back(tir::make_for(q, scanned, n - scanned, consider(zero, element, q)));
    row.push_back(sort_and_write(zero, [&](const PrimExpr& w) { return contiguous ? o * k + w : (o * k + w) * inner + i; }));
    Stmt body = tir::seq(row);
    for (const Buffer& b : block_locals) body = hand::with_local(b, body);
    for (const Buffer& b : {hv, hi, pos, done}) body = hand::with_local(b, body);
    if (!inner_c || *inner_c > carried) parts.push_back(tir::make_for(r, 0, outer * per_outer, body, tir::ForKind::kParallel));
  }
  Stmt body = tir::seq(parts);
  if (!k_c) body = tir::if_then_else(k > 0, body);
  if (!(k_c && n_c))
    body = tir::assert_stmt(k <= n, "topk: k = {} is larger than the axis length {}", body, {k, n});
  return body;
}

}  // namespace anvil::ops
