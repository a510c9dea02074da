// The linear cumsum kernel (cumsum.h).
#include "anvil/ops/cpu/cumsum.h"

#include <algorithm>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/hand_kernel.h"
#include "anvil/ops/cpu/vector_width.h"

namespace anvil::ops {

using ir::Buffer;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using tir::Stmt;

tir::Stmt cumsum_kernel(const graph::CallNode& call, const std::vector<Buffer>& inputs,
                        const std::vector<Buffer>& outputs, const Target& target) {
  const Buffer& xb = inputs[0];
  const std::vector<PrimExpr>& shape = xb->shape();
  const int ndim = xb->ndim();
  if (ndim == 0) value_error("cumsum: the input is 0-d; it needs an axis to scan");
  const int axis = graph::ops::normalize_axis(graph::get_int(call.attrs(), "axis", 0), ndim);
  const bool exclusive = graph::get_int(call.attrs(), "exclusive", 0) != 0;
  const bool reverse = graph::get_int(call.attrs(), "reverse", 0) != 0;
  Buffer x = hand::flat(xb), y = hand::flat(outputs[0]);
  const DataType out = outputs[0]->dtype(), acc = compute_dtype(out), it = shape[axis].dtype();
  PrimExpr outer = hand::extent_product(shape, 0, axis, it), n = ir::cast(it, shape[axis]);
  PrimExpr inner = hand::extent_product(shape, axis + 1, ndim, it);

  // One step of the scan at flat element e, lane `lane` of accumulator a: out gets the sum
  // before (exclusive) or after adding x[e].
  auto step = [&](const Buffer& a, const PrimExpr& lane, const PrimExpr& e) {
    PrimExpr sum = hand::at(a, lane) + convert(acc, hand::at(x, e));
    Stmt write = hand::put(y, e, convert(out, hand::at(a, lane)));
    return exclusive ? tir::seq({write, hand::put(a, lane, sum)}) : tir::seq({hand::put(a, lane, sum), write});
  };
  // Scan positions t in order; p = the axis index read at step t.
  auto axis_index = [&](const Var& t) { return reverse ? n - 1 - t : PrimExpr(t); };

  // Lanes carried together when the axis is not innermost: the target's vector (of acc's width),
  // or the whole inner extent when that is a smaller constant.
  std::optional<int64_t> inner_c = ir::as_const_int(inner);
  if (inner_c && *inner_c == 0) return tir::evaluate(0);  // no elements
  int lanes = std::max(1, vector_lanes_of(target) * 4 / std::max(1, acc.bits() / 8));
  if (inner_c) lanes = static_cast<int>(std::min<int64_t>(lanes, *inner_c));
  std::vector<Stmt> parts;
  // Full vector blocks of the inner positions and the rest (all of them without vectors).
  PrimExpr blocks = lanes == 1 ? ir::int_imm(0, it)
                    : inner_c  ? ir::int_imm(*inner_c / lanes, it)
                               : ir::floordiv(inner, lanes);
  PrimExpr rest = lanes == 1 ? inner : inner_c ? ir::int_imm(*inner_c % lanes, it) : inner - blocks * lanes;
  if (lanes > 1) {
    Var ob("ob", it), t("t", it), l("l", it);
    PrimExpr o = ir::floordiv(ob, blocks), b = ir::floormod(ob, blocks);
    Buffer a = hand::local(ir::int_imm(lanes, it), acc, "cumsum_acc");
    PrimExpr e = (o * n + axis_index(t)) * inner + b * lanes + l;
    Stmt body = tir::seq({tir::make_for(l, 0, lanes, hand::put(a, l, ir::make_zero(acc)), tir::ForKind::kVectorized),
                          tir::make_for(t, 0, n, tir::make_for(l, 0, lanes, step(a, l, e), tir::ForKind::kVectorized))});
    parts.push_back(tir::make_for(ob, 0, outer * blocks, hand::with_local(a, body), tir::ForKind::kParallel));
  }
  // The inner positions past the last full vector block (all of them when the axis is
  // innermost), one scalar accumulator each.
  if (ir::as_const_int(rest).value_or(1) != 0) {
    Var r("r", it), t("t", it);
    bool innermost = inner_c && *inner_c == 1;
    PrimExpr o = innermost ? PrimExpr(r) : ir::floordiv(r, rest);
    PrimExpr i = innermost ? ir::int_imm(0, it) : blocks * lanes + ir::floormod(r, rest);
    Buffer a = hand::local(ir::int_imm(1, it), acc, "cumsum_acc");
    PrimExpr e = (o * n + axis_index(t)) * inner + i;
    PrimExpr zero = ir::int_imm(0, it);
    Stmt body = tir::seq({hand::put(a, zero, ir::make_zero(acc)), tir::make_for(t, 0, n, step(a, zero, e))});
    parts.push_back(tir::make_for(r, 0, outer * rest, hand::with_local(a, body), tir::ForKind::kParallel));
  }
  return tir::seq(parts);
}

}  // namespace anvil::ops
