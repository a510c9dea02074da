// The heap topk kernel (topk.h).
#include "anvil/ops/cpu/topk.h"

#include <algorithm>
#include <bit>
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
  Buffer hv = hand::local(k, acc, "topk_heap_values"), hi = hand::local(k, it, "topk_heap_indices");
  Buffer pos = hand::local(ir::int_imm(1, it), it, "topk_pos"), done = hand::local(ir::int_imm(1, it), it, "topk_done");
  // Every move goes one level down, so floor(log2 k) levels reach a leaf.
  const int levels = k_c ? static_cast<int>(std::bit_width(static_cast<uint64_t>(*k_c))) - 1 : kSymbolicLevels;

  // Places (v, vi) in the heap [0, size) whose slot `start` is free: while the later of start's
  // children comes after (v, vi) it moves up.
  auto sift_down = [&](const PrimExpr& start, const PrimExpr& size, const PrimExpr& v, const PrimExpr& vi) {
    Var c("c", it), c1("c1", it), m("m", it), level("level", it);
    PrimExpr p = at(pos, zero);
    Stmt move = tir::if_then_else(before(v, vi, at(hv, m), at(hi, m)),
                                  tir::seq({put(hv, p, at(hv, m)), put(hi, p, at(hi, m)), put(pos, zero, m)}),
                                  put(done, zero, ir::int_imm(1, it)));
    // c1 is c itself when c is the last slot (then m = c).
    Stmt step = tir::let_stmt(
        c, p * 2 + 1,
        tir::if_then_else(c < size,
                          tir::let_stmt(c1, ir::min(c + 1, size - 1),
                                        tir::let_stmt(m, ir::select(before(at(hv, c), at(hi, c), at(hv, c1), at(hi, c1)), c1, c),
                                                      move)),
                          put(done, zero, ir::int_imm(1, it))));
    std::vector<Stmt> s = {put(pos, zero, start), put(done, zero, zero)};
    if (levels > 0) s.push_back(tir::make_for(level, 0, levels, tir::if_then_else(ir::eq(at(done, zero), zero), step)));
    s.push_back(put(hv, at(pos, zero), v));
    s.push_back(put(hi, at(pos, zero), vi));
    return tir::seq(s);
  };

  Var r("r", it);
  const bool contiguous = inner_c && *inner_c == 1;
  PrimExpr o = contiguous ? PrimExpr(r) : ir::floordiv(r, inner), i = contiguous ? zero : ir::floormod(r, inner);
  auto element = [&](const PrimExpr& q) { return contiguous ? o * n + q : (o * n + q) * inner + i; };
  // Element q replaces the root when it beats it (a later index never wins a tie).
  auto consider = [&](const PrimExpr& q) {
    Var xv("xv", acc);
    return tir::let_stmt(xv, convert(acc, at(x, element(q))),
                         tir::if_then_else(beats(xv, at(hv, zero)), sift_down(zero, k, xv, q)));
  };

  std::vector<Stmt> row;
  Var j("j", it);
  row.push_back(tir::make_for(j, 0, k, tir::seq({put(hv, j, convert(acc, at(x, element(j)))), put(hi, j, j)})));
  {  // heapify: the internal slots from the last one up
    Var t("t", it), s("s", it), v("v", acc), vi("vi", it);
    PrimExpr half = ir::floordiv(k, 2);
    row.push_back(tir::make_for(
        t, 0, half,
        tir::let_stmt(s, half - 1 - t,
                      tir::let_stmt(v, at(hv, s), tir::let_stmt(vi, at(hi, s), sift_down(s, k, v, vi))))));
  }
  std::vector<Buffer> block_locals;
  PrimExpr scanned = k;  // elements before the scalar tail
  int lanes = std::max(1, vector_lanes_of(target) * 4 / std::max(1, acc.bits() / 8));
  if (contiguous && lanes > 1) {
    const int span = lanes * kBlockVectors;
    PrimExpr blocks = k_c && n_c ? ir::int_imm((*n_c - *k_c) / span, it) : ir::floordiv(n - k, span);
    Var b("b", it), l("l", it), g("g", it), e("e", it);
    PrimExpr base = k + b * span;
    Buffer best = hand::local(ir::int_imm(lanes, it), acc, "topk_block_best");
    block_locals.push_back(best);
    auto pick = [&](const PrimExpr& a, const PrimExpr& c) { return largest ? ir::max(a, c) : ir::min(a, c); };
    Stmt first = tir::make_for(l, 0, lanes, put(best, l, convert(acc, at(x, element(base + l)))), tir::ForKind::kVectorized);
    Stmt rest = tir::make_for(
        g, 1, kBlockVectors - 1,
        tir::make_for(l, 0, lanes, put(best, l, pick(at(best, l), convert(acc, at(x, element(base + g * lanes + l))))),
                      tir::ForKind::kVectorized));
    std::vector<PrimExpr> tree;
    for (int q = 0; q < lanes; ++q) tree.push_back(at(best, ir::int_imm(q, it)));
    while (tree.size() > 1) {
      std::vector<PrimExpr> next;
      for (size_t q = 0; q + 1 < tree.size(); q += 2) next.push_back(pick(tree[q], tree[q + 1]));
      if (tree.size() % 2) next.push_back(tree.back());
      tree = std::move(next);
    }
    Stmt search = tir::if_then_else(beats(tree[0], at(hv, zero)), tir::make_for(e, 0, span, consider(base + e)));
    row.push_back(tir::make_for(b, 0, blocks, tir::seq({first, rest, search})));
    scanned = k + blocks * span;
  }
  {
    Var q("q", it);
    row.push_back(tir::make_for(q, scanned, n - scanned, consider(q)));
  }
  {  // heapsort: the root (the pair that comes last) to the end of the shrinking heap
    Var t("t", it), s("s", it), v("v", acc), vi("vi", it);
    row.push_back(tir::make_for(
        t, 0, k - 1,
        tir::let_stmt(s, k - 1 - t,
                      tir::let_stmt(v, at(hv, s),
                                    tir::let_stmt(vi, at(hi, s),
                                                  tir::seq({put(hv, s, at(hv, zero)), put(hi, s, at(hi, zero)),
                                                            sift_down(zero, s, v, vi)}))))));
  }
  {
    Var w("w", it);
    PrimExpr dst = contiguous ? o * k + w : (o * k + w) * inner + i;
    row.push_back(tir::make_for(w, 0, k,
                                tir::seq({put(values, dst, convert(out, at(hv, w))),
                                          put(indices, dst, ir::cast(DataType::int64(), at(hi, w)))})));
  }
  Stmt body = tir::seq(row);
  for (const Buffer& b : block_locals) body = hand::with_local(b, body);
  for (const Buffer& b : {hv, hi, pos, done}) body = hand::with_local(b, body);
  body = tir::make_for(r, 0, outer * inner, body, tir::ForKind::kParallel);
  if (!k_c) body = tir::if_then_else(k > 0, body);
  if (!(k_c && n_c))
    body = tir::assert_stmt(k <= n, "topk: k = {} is larger than the axis length {}", body, {k, n});
  return body;
}

}  // namespace anvil::ops
