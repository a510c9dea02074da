// Pooling for CPUs: nn.max_pool2d / nn.avg_pool2d (window reductions with per-side padding,
// strides, dilation, ceil_mode, count_include_pad) vectorised along the output row with the
// window loops outside the vector: static planes by the plane-window schedule (nn_util.h), the
// rest by schedule_row_reduction; global pools as one reduction per
// (batch, channel) plane, planes in parallel; nn.max_pool2d_indices (MaxPool's Indices) as a
// min-reduction of the flat indices of the taps equal to the pooled maximum.
//
// Static planes are padded per plane (with -inf for max, 0 for avg) just before their rows are
// pooled, so each tap is a plain (or strided) vector load: ResNet's 3x3/2 max pool at 112x112
// had a clamped gather per tap (8x ONNX Runtime). Otherwise out-of-input taps read a clamped
// element replaced by -inf or 0 with select. avg_pool2d divides by the number of taps inside the input
// (count_include_pad = 0) or inside the padded input (1); windows that ceil_mode lets run past
// the padded input count only their taps inside it, as ONNX Runtime does.
#include <cmath>
#include <limits>
#include <optional>

#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

struct PoolAttrs {
  int kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool include_pad;
};

PoolAttrs pool_attrs(const graph::CallNode& call) {
  const graph::Attrs& a = call.attrs();
  std::vector<int64_t> k = graph::get_ints(a, "pool_size"), st = graph::get_ints(a, "strides", {1, 1}),
                       pad = graph::get_ints(a, "padding", {0, 0, 0, 0}), dil = graph::get_ints(a, "dilation", {1, 1});
  return {int(k[0]),   int(k[1]),   int(st[0]),  int(st[1]),  int(pad[0]),
          int(pad[1]), int(pad[2]), int(pad[3]), int(dil[0]), int(dil[1]),
          graph::get_int(a, "count_include_pad", 0) != 0};
}

PrimExpr clamp(const PrimExpr& v, const PrimExpr& hi) { return ir::min(ir::max(v, 0), hi - 1); }

constexpr const char* kPaddedName = "pool_padded";
constexpr const char* kCountsName = "pool_counts";

// Taps r in [0, k) with lo <= start + r*d < hi.
PrimExpr taps(const PrimExpr& start, int k, int d, const PrimExpr& lo, const PrimExpr& hi) {
  PrimExpr first = ir::max(ir::floordiv(lo - start + (d - 1), d), 0);
  PrimExpr last = ir::min(ir::floordiv(hi - 1 - start, d), k - 1);
  return ir::max(last - first + 1, 0);
}

// The input planes with the padding made explicit (filled with `fill`), sized for every tap of
// the output (ceil_mode windows past the declared padding read the fill too): taps then read
// the padded plane without conditions. Only for static planes; undefined otherwise.
te::Tensor padded_planes(const te::Tensor& x, const PoolAttrs& p, const std::vector<PrimExpr>& oshape,
                         const PrimExpr& fill) {
  const std::optional<int64_t> H = ir::as_const_int(x.shape()[2]), W = ir::as_const_int(x.shape()[3]);
  const std::optional<int64_t> Ho = ir::as_const_int(oshape[2]), Wo = ir::as_const_int(oshape[3]);
  if (x.ndim() != 4 || !H || !W || !Ho || !Wo || *Ho < 1 || *Wo < 1) return {};
  const int64_t Hp = (*Ho - 1) * p.sh + (p.kh - 1) * p.dh + 1, Wp = (*Wo - 1) * p.sw + (p.kw - 1) * p.dw + 1;
  if (p.pt == 0 && p.pl == 0 && Hp <= *H && Wp <= *W) return x;  // every tap inside the input
  return te::compute(
      {x.shape()[0], x.shape()[1], int(Hp), int(Wp)},
      [&](Var n, Var c, Var y, Var xx) {
        PrimExpr iy = y - p.pt, ix = xx - p.pl;
        PrimExpr inside = iy >= 0 && iy < int(*H) && ix >= 0 && ix < int(*W);
        return ir::select(inside, x(n, c, clamp(iy, int(*H)), clamp(ix, int(*W))), fill);
      },
      kPaddedName);
}

std::vector<te::Tensor> pool_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in, bool is_max) {
  const PoolAttrs p = pool_attrs(call);
  const te::Tensor& x = in[0];
  const PrimExpr H = x.shape()[2], W = x.shape()[3];
  DataType dt = x.dtype();
  te::IterVar ry = te::reduce_axis(0, p.kh, "ry"), rx = te::reduce_axis(0, p.kw, "rx");
  std::vector<PrimExpr> oshape = out_shape(call);
  const PrimExpr lowest = te::reduce_identity(te::ReduceKind::kMax, dt);  // -inf, or the lowest integer
  const te::Tensor padded = padded_planes(x, p, oshape, is_max ? lowest : ir::make_zero(dt));
  auto tap = [&](Var n, Var c, Var y, Var xo, PrimExpr fill) {
    if (padded.defined()) return padded(n, c, y * p.sh + ry * p.dh, xo * p.sw + rx * p.dw);
    PrimExpr iy = y * p.sh + ry * p.dh - p.pt, ix = xo * p.sw + rx * p.dw - p.pl;
    PrimExpr inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
    return ir::select(inside, x(n, c, clamp(iy, H), clamp(ix, W)), fill);
  };
  if (is_max) {
    return {te::compute(
        oshape, [&](Var n, Var c, Var y, Var xo) { return te::max(tap(n, c, y, xo, lowest), {ry, rx}); },
        "max_pool2d")};
  }
  te::Tensor sum = te::compute(
      oshape, [&](Var n, Var c, Var y, Var xo) { return te::sum(tap(n, c, y, xo, ir::make_zero(dt)), {ry, rx}); },
      "pool_sum");
  auto count = [&](const PrimExpr& y, const PrimExpr& xo) {
    PrimExpr sy = y * p.sh - p.pt, sx = xo * p.sw - p.pl;
    PrimExpr cy = p.include_pad ? taps(sy, p.kh, p.dh, ir::int_imm(-p.pt), H + p.pb) : taps(sy, p.kh, p.dh, 0, H);
    PrimExpr cx = p.include_pad ? taps(sx, p.kw, p.dw, ir::int_imm(-p.pl), W + p.pr) : taps(sx, p.kw, p.dw, 0, W);
    return ir::cast(dt, ir::max(cy * cx, 1));
  };
  // With static planes the divisors are one small table shared by every plane (its integer
  // arithmetic per output element cost 2.3x ONNX Runtime on a 3x3/1 pool at 28x28).
  te::Tensor counts;
  if (padded.defined() && ir::as_const_int(oshape[2]) && ir::as_const_int(oshape[3]))
    counts = te::compute({oshape[2], oshape[3]}, [&](Var y, Var xo) { return count(y, xo); }, kCountsName);
  return {te::compute(
      oshape,
      [&](Var n, Var c, Var y, Var xo) {
        return sum(n, c, y, xo) / (counts.defined() ? counts(y, xo) : count(y, xo));
      },
      "avg_pool2d")};
}

// The smallest flat index ((n*C + c)*H + iy)*W + ix (storage_order 0; 1: column-major in a plane,
// ((n*C + c)*W + ix)*H + iy) of a tap inside the input whose value is the
// window's maximum (pooled): the first in row-major order, as ONNX Runtime reports.
std::vector<te::Tensor> max_pool_indices_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const PoolAttrs p = pool_attrs(call);
  const te::Tensor &x = in[0], &pooled = in[1];
  const PrimExpr C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  const DataType i64 = DataType::int64();
  te::IterVar ry = te::reduce_axis(0, p.kh, "ry"), rx = te::reduce_axis(0, p.kw, "rx");
  te::Tensor first = te::compute(
      out_shape(call),
      [&](Var n, Var c, Var y, Var xo) {
        PrimExpr iy = y * p.sh + ry * p.dh - p.pt, ix = xo * p.sw + rx * p.dw - p.pl;
        PrimExpr inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
        PrimExpr hit = inside && ir::eq(x(n, c, clamp(iy, H), clamp(ix, W)), pooled(n, c, y, xo));
        PrimExpr flat = ((ir::cast(i64, n) * ir::cast(i64, C) + ir::cast(i64, c)) * ir::cast(i64, H) + ir::cast(i64, iy)) *
                            ir::cast(i64, W) + ir::cast(i64, ix);
        return te::min(ir::select(hit, flat, ir::int_imm(INT64_MAX, i64)), {ry, rx});
      },
      graph::get_int(call.attrs(), "storage_order", 0) != 0 ? "max_pool2d_first" : "max_pool2d_indices");
  if (graph::get_int(call.attrs(), "storage_order", 0) == 0) return {first};
  // Column-major (storage_order 1): the same tap, its index with H varying fastest in a plane.
  const PrimExpr hw = ir::cast(i64, H) * ir::cast(i64, W);
  return {te::compute(
      first.shape(),
      [&](Var n, Var c, Var y, Var xo) {
        PrimExpr r = first(n, c, y, xo), in_plane = ir::floormod(r, hw);
        return r - in_plane + ir::floormod(in_plane, ir::cast(i64, W)) * ir::cast(i64, H) +
               ir::floordiv(in_plane, ir::cast(i64, W));
      },
      "max_pool2d_indices")};
}

void max_pool_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  inline_elementwise_except(s, outs, {kPaddedName});
  te::Tensor pool = find_tensor(outs, "max_pool2d");
  if (!pool.defined()) pool = outs[0];
  if (schedule_plane_window(s, outs[0], pool, find_tensor(outs, kPaddedName), target)) return;
  schedule_row_reduction(s, outs[0], pool, target);
}

// The sums: a vector of the row at a time inside the output's row loop.
void avg_pool_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  inline_elementwise_except(s, outs, {kPaddedName, kCountsName});  // the division (and any epilogue) into the output
  const te::Tensor& out = outs[0];
  te::Tensor sum = find_tensor(outs, "pool_sum");
  if (schedule_plane_window(s, out, sum, find_tensor(outs, kPaddedName), target)) return;
  te::Stage& st = s[out];
  const int vf = vector_factor(out.shape()[3], lanes_for(target, out.dtype()));
  te::IterVar attach = out.axis(3);
  if (vf > 0) {
    auto [xo, xi] = st.split(out.axis(3), vf);
    st.vectorize(xi);
    attach = xo;
  }
  fuse_all_parallel(st, {out.axis(0), out.axis(1), out.axis(2)});
  s[sum].compute_at(st, attach);
  s[sum].reorder({sum.axis(0), sum.axis(1), sum.axis(2), sum.reduce_axis(0), sum.reduce_axis(1), sum.axis(3)});
  if (vf > 0) s[sum].vectorize(sum.axis(3));
}

std::vector<te::Tensor> global_pool_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in,
                                            bool is_max) {
  const te::Tensor& x = in[0];
  te::IterVar ry = te::reduce_axis(0, x.shape()[2], "ry"), rx = te::reduce_axis(0, x.shape()[3], "rx");
  std::vector<PrimExpr> oshape = out_shape(call);
  if (is_max)
    return {te::compute(
        oshape, [&](Var n, Var c, Var, Var) { return te::max(x(n, c, ry, rx), {ry, rx}); }, "global_max_pool2d")};
  te::Tensor sum = te::compute(
      oshape, [&](Var n, Var c, Var, Var) { return te::sum(x(n, c, ry, rx), {ry, rx}); }, "pool_sum");
  const PrimExpr count = ir::cast(x.dtype(), x.shape()[2] * x.shape()[3]);
  return {te::compute(
      oshape, [&](Var n, Var c, Var y, Var xo) { return sum(n, c, y, xo) / count; }, "global_avg_pool2d")};
}

void global_pool_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target&) {
  const te::Tensor& out = outs[0];
  te::Tensor sum = find_tensor(outs, "pool_sum");
  te::IterVar planes = fuse_all_parallel(s[out], {out.axis(0), out.axis(1)});
  if (sum.defined()) s[sum].compute_at(s[out], planes);
}

}  // namespace

void register_pool_strategies() {
  register_implementation("nn.max_pool2d", "cpu",
                          {"max_pool2d.x86",
                           [](const graph::CallNode& c, const std::vector<te::Tensor>& in) {
                             return pool_compute(c, in, true);
                           },
                           max_pool_schedule});
  register_implementation("nn.max_pool2d_indices", "cpu",
                          {"max_pool2d_indices.x86", max_pool_indices_compute,
                           [](te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
                             inline_elementwise_except(s, outs, {});
                             te::Tensor first = find_tensor(outs, "max_pool2d_first");
                             schedule_row_reduction(s, outs[0], first.defined() ? first : outs[0], target);
                           }});
  register_implementation("nn.avg_pool2d", "cpu",
                          {"avg_pool2d.x86",
                           [](const graph::CallNode& c, const std::vector<te::Tensor>& in) {
                             return pool_compute(c, in, false);
                           },
                           avg_pool_schedule});
  register_implementation("nn.global_max_pool2d", "cpu",
                          {"global_max_pool2d.x86",
                           [](const graph::CallNode& c, const std::vector<te::Tensor>& in) {
                             return global_pool_compute(c, in, true);
                           },
                           global_pool_schedule});
  register_implementation("nn.global_avg_pool2d", "cpu",
                          {"global_avg_pool2d.x86",
                           [](const graph::CallNode& c, const std::vector<te::Tensor>& in) {
                             return global_pool_compute(c, in, false);
                           },
                           global_pool_schedule});
}

}  // namespace anvil::ops
