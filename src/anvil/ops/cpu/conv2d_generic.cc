// nn.conv2d and nn.conv2d_transpose for CPUs: compute definitions for every attribute form
// (strides, dilation, per-side padding, groups, symbolic batch) and three schedules:
//
//  - "conv_pointwise" (1x1, unit strides, no padding, one group, static planes of at least 28x28
//    with rows of at least 28, AVX-512): a GEMM tile of 4-8 output channels x 1-2 rows x 16-64
//    columns vectorised along the NCHW row (see pointwise_tile), weights [O/kt, C, 1, 1, kt].
//  - "conv2d_nchwc.x86" (static channels and spatial dims, output channels per group divisible
//    by a vector block): the NCHWc register tile of ops/cpu/conv2d.h — weights packed inside the
//    kernel to [O/kb, C/g, R, S, kb] (a compile-time packing pass can take that over), a tile of
//    ow_block columns x kb channels vectorised over the channels, rows of (batch, channel block,
//    output row) in parallel tasks. The batch may be symbolic: the parallel axis then has a
//    symbolic extent and a guarded tail.
//  - "conv2d_nchw_row.x86" (depthwise, few channels per group, symbolic spatial dims): one
//    output row vector at a time accumulated in registers, the reduction (c, r, s) outside the
//    vector, (batch, channel, row) in parallel; strided columns read from stride phases of the
//    padded planes (contiguous per tap). Depthwise: (batch, channel) planes in parallel, each
//    plane's padded input made just before its rows (schedule_depthwise).
// KxK stride-1 convolutions over large planes whose output channels are not whole vectors take
// "conv_rows" (ops/cpu/conv2d_rows.h), at most 4 input channels "conv_few_channels".
// nn.conv2d_transpose: the gather form vectorised along the output row, or, with stride equal
// to the kernel, one tap per output computed along input rows and interleaved (transpose_by_taps).
#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/conv2d.h"
#include "anvil/ops/cpu/conv2d_depthwise_flat.h"
#include "anvil/ops/cpu/conv2d_few_channels.h"
#include "anvil/ops/cpu/conv2d_rows.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/cpu/vector_width.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

struct ConvAttrs {
  int sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, groups = 1;
};

ConvAttrs conv_attrs(const graph::CallNode& call) {
  const graph::Attrs& a = call.attrs();
  std::vector<int64_t> st = graph::get_ints(a, "strides", {1, 1}), pad = graph::get_ints(a, "padding", {0, 0, 0, 0}),
                       dil = graph::get_ints(a, "dilation", {1, 1});
  ConvAttrs c;
  c.sh = int(st[0]), c.sw = int(st[1]);
  c.pt = int(pad[0]), c.pl = int(pad[1]), c.pb = int(pad[2]), c.pr = int(pad[3]);
  c.dh = int(dil[0]), c.dw = int(dil[1]);
  c.groups = int(graph::get_int(a, "groups", 1));
  return c;
}

PrimExpr clamp(const PrimExpr& v, const PrimExpr& hi) { return ir::min(ir::max(v, 0), hi - 1); }

// data with zeros around each plane (the data itself when there is no padding).
te::Tensor pad_planes(const te::Tensor& data, const ConvAttrs& c, const std::string& name = "padded") {
  if (c.pt == 0 && c.pl == 0 && c.pb == 0 && c.pr == 0) return data;
  const PrimExpr H = data.shape()[2], W = data.shape()[3];
  DataType dt = data.dtype();
  // select() evaluates both sides: the read clamps its indices into the input.
  return te::compute(
      {data.shape()[0], data.shape()[1], H + (c.pt + c.pb), W + (c.pl + c.pr)},
      [&](Var n, Var ch, Var y, Var x) {
        PrimExpr inside = y >= c.pt && y < H + c.pt && x >= c.pl && x < W + c.pl;
        return ir::select(inside, data(n, ch, clamp(y - c.pt, H), clamp(x - c.pl, W)), ir::make_zero(dt));
      },
      name);
}

int64_t packed_block_of(const graph::CallNode& call) {
  std::string layout = graph::get_string(call.attrs(), "kernel_layout", "OIHW");
  return layout == "OIHW" ? 0 : std::stoll(layout.substr(4, layout.size() - 5));
}

// A 1x1 convolution with unit strides, no padding and one group over a large plane is a GEMM
// out[n, k, y, x] = sum_c w[k, c] * data[n, c, y, x]. The NCHWc register tile (columns x
// channels, stored back to NCHW through a transpose) loses there when the reduction is short
// (MobileNetV2's 16 -> 96 at 112x112: 3.8x ONNX Runtime): its store dominates. Here the tile is
// kt output channels x rows x columns vectorised along the row, so the data rows load
// contiguously, the weights are broadcast scalars ([O/kt, C, 1, 1, kt], contiguous per input
// channel) and the output and its epilogue store contiguously in NCHW.
struct PointwiseTile {
  int cols = 0, rows = 0, channels = 0;  // columns (vectorised), rows and channels (unrolled)
};

// About 16 vector accumulators of 16 floats: columns a divisor of W (whole rows up to 64),
// two rows when a row is one vector. Empty (channels 0) when the plane is too small or odd.
PointwiseTile pointwise_tile(int64_t H, int64_t W, int64_t O) {
  PointwiseTile t;
  if (W < 28 || H * W < 28 * 28) return t;  // smaller planes: the NCHWc tile measured as fast
  for (int c = 64; c >= 16 && t.cols == 0; c -= 16)
    if (W % c == 0) t.cols = c;
  if (t.cols == 0) t.cols = 16;  // a guarded last column tile
  const int vectors = (t.cols + 15) / 16;
  t.rows = vectors == 1 && H % 2 == 0 ? 2 : 1;
  const int want = vectors * t.rows <= 2 ? 8 : 4;  // 8 x 2 or 4 x (3 or 4) accumulators
  for (int k = want; k >= 4; k /= 2)
    if (O % k == 0) {
      t.channels = k;
      break;
    }
  return t;
}

// Output channels per tile of the pointwise schedule, 0 when it does not apply.
int pointwise_block(const graph::CallNode& call, const std::vector<PrimExpr>& data_shape,
                    const std::vector<PrimExpr>& weight_oihw, DataType dtype, const Target& target) {
  const ConvAttrs c = conv_attrs(call);
  if (dtype != DataType::float32() || c.groups != 1 || c.sh != 1 || c.sw != 1 || c.dh != 1 || c.dw != 1 || c.pt ||
      c.pl || c.pb || c.pr || vector_lanes_of(target) < 16)
    return 0;
  for (int i = 1; i < 4; ++i)
    if (!ir::as_const_int(data_shape[i])) return 0;
  for (int i = 0; i < 4; ++i)
    if (!ir::as_const_int(weight_oihw[i])) return 0;
  if (*ir::as_const_int(weight_oihw[2]) != 1 || *ir::as_const_int(weight_oihw[3]) != 1) return 0;
  return pointwise_tile(*ir::as_const_int(data_shape[2]), *ir::as_const_int(data_shape[3]),
                        *ir::as_const_int(weight_oihw[0]))
      .channels;
}

template <typename WeightAt>
std::vector<te::Tensor> conv2d_pointwise(const te::Tensor& data, const te::Tensor& weight, int64_t packed,
                                         const WeightAt& w_at, const std::vector<PrimExpr>& oshape, int kt) {
  const int O = int(*ir::as_const_int(oshape[1]));
  te::Tensor wp = weight;
  if (packed != kt) {
    wp = te::compute({O / kt, weight.shape()[1], 1, 1, kt},
                     [&](const std::vector<Var>& i) { return w_at(i[0] * kt + i[4], i[1], 0, 0); }, "weight_packed");
  }
  te::IterVar rc = te::reduce_axis(0, data.shape()[1], "rc");
  return {te::compute(
      oshape,
      [&](Var n, Var k, Var y, Var x) {
        return te::sum(data(n, rc, y, x) * wp(ir::floordiv(k, kt), rc, 0, 0, ir::floormod(k, kt)), {rc});
      },
      "conv_pointwise")};
}

std::vector<te::Tensor> conv2d_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in,
                                       const Target& target) {
  const ConvAttrs c = conv_attrs(call);
  const te::Tensor& data = in[0];
  const te::Tensor& weight = in[1];
  const int64_t packed = packed_block_of(call);
  std::vector<PrimExpr> oshape = out_shape(call);
  const PrimExpr O = oshape[1], Cg = weight.shape()[1];
  std::vector<PrimExpr> wshape = {O, Cg, weight.shape()[2], weight.shape()[3]};
  const int64_t o_static = ir::as_const_int(O).value_or(0);
  // The weight as OIHW whatever its layout (a prepacked one read through its blocks).
  auto w_at = [&](PrimExpr o, PrimExpr rc, PrimExpr ry, PrimExpr rx) {
    if (!packed) return weight(o, rc, ry, rx);
    return weight(ir::floordiv(o, int(packed)), rc, ry, rx, ir::floormod(o, int(packed)));
  };
  te::Tensor padded = pad_planes(data, c);
  te::IterVar rc = te::reduce_axis(0, Cg, "rc"), ry = te::reduce_axis(0, weight.shape()[2], "ry"),
              rx = te::reduce_axis(0, weight.shape()[3], "rx");
  if (const int kt = pointwise_block(call, data.shape(), wshape, data.dtype(), target); kt > 0)
    return conv2d_pointwise(data, weight, packed, w_at, oshape, kt);
  if (std::vector<te::Tensor> few = conv2d_few_channels_compute(call, data, weight); !few.empty()) return few;
  if (std::vector<te::Tensor> rows = conv2d_rows_compute(call, data, weight, target); !rows.empty()) return rows;
  int kb = conv2d_nchwc_block(data.shape(), wshape, data.dtype(), c.groups, target);
  const bool depthwise = ir::as_const_int(Cg) == std::optional<int64_t>(1) && o_static == c.groups;
  if (packed && kb > 0 && (o_static / c.groups) % packed == 0) kb = int(packed);
  if (kb > 0 && !depthwise) {
    const int og_blocks = int(o_static / c.groups / kb);
    te::Tensor wp = weight;
    if (!packed || packed != kb) {
      wp = te::compute(
          {int(o_static / kb), Cg, weight.shape()[2], weight.shape()[3], kb},
          [&](const std::vector<Var>& i) { return w_at(i[0] * kb + i[4], i[1], i[2], i[3]); }, "weight_packed");
    }
    te::Tensor blocked = te::compute(
        {oshape[0], int(o_static / kb), oshape[2], oshape[3], kb},
        [&](const std::vector<Var>& i) {
          PrimExpr ch = c.groups == 1 ? PrimExpr(rc) : ir::floordiv(i[1], og_blocks) * Cg + rc;
          return te::sum(padded(i[0], ch, i[2] * c.sh + ry * c.dh, i[3] * c.sw + rx * c.dw) * wp(i[1], rc, ry, rx, i[4]),
                         {rc, ry, rx});
        },
        "conv_blocked");
    return {te::compute(
        oshape, [&](Var n, Var k, Var y, Var x) { return blocked(n, ir::floordiv(k, kb), y, x, ir::floormod(k, kb)); },
        "conv2d")};
  }
  if (depthwise && !packed && c.sh == c.sw && c.dh == 1 && c.dw == 1)
    if (std::vector<te::Tensor> flat = depthwise_flat_compute(data, weight, {c.pt, c.pl, c.pb, c.pr}, c.sh);
        !flat.empty())
      return flat;
  const PrimExpr og = ir::floordiv(O, c.groups);
  // Strided columns (a grouped convolution with strides): the padded planes split once into sw
  // column phases, phases[n, c, y, p, j] = padded[n, c, y, j*sw + p], so that each tap reads a
  // contiguous run along the output row (x*sw + off = (x + off/sw)*sw + off%sw) instead of a
  // stride-sw gather per tap. It takes the name "padded" (the schedule computes it whole); the
  // zero-padded planes are inlined into it. Depthwise reads its padded plane (made per plane,
  // in L1/L2) with the stride: a load and a shuffle per tap (MobileNetV2's 96x112 stride 2:
  // 1.84x ORT with phases, 0.93x without).
  te::Tensor phases;
  if (c.sw > 1 && !depthwise) {
    te::Tensor plain = pad_planes(data, c, "padded_plain");
    const PrimExpr Wp = plain.shape()[3];
    phases = te::compute(
        {plain.shape()[0], plain.shape()[1], plain.shape()[2], c.sw, ir::floordiv(Wp + (c.sw - 1), c.sw)},
        [&](const std::vector<Var>& i) { return plain(i[0], i[1], i[2], ir::min(i[4] * c.sw + i[3], Wp - 1)); },
        "padded");
  }
  auto read = [&](const PrimExpr& n, const PrimExpr& ch, const PrimExpr& yy, const Var& x) {
    if (!phases.defined()) return padded(n, ch, yy, x * c.sw + rx * c.dw);
    PrimExpr off = PrimExpr(rx) * c.dw;
    return phases(n, ch, yy, ir::floormod(off, c.sw), x + ir::floordiv(off, c.sw));
  };
  // float16/bfloat16 accumulate in float32 (as ONNX Runtime and the reference do), rounded once
  // in a cast stage the schedule takes as the anchor's epilogue.
  const DataType acc = compute_dtype(data.dtype());
  te::Tensor conv = te::compute(
      oshape,
      [&](Var n, Var o, Var y, Var x) {
        PrimExpr ch = c.groups == 1 ? PrimExpr(rc) : ir::floordiv(o, og) * Cg + rc;
        return te::sum(convert(acc, read(n, ch, y * c.sh + ry * c.dh, x)) *
                           convert(acc, w_at(o, rc, ry, rx)),
                       {rc, ry, rx});
      },
      "conv2d");
  if (acc == data.dtype()) return {conv};
  return {te::compute(
      oshape, [&](Var n, Var o, Var y, Var x) { return convert(data.dtype(), conv(n, o, y, x)); }, "conv2d.cast")};
}

void schedule_padded(te::Schedule& s, const te::Tensor& padded) {
  if (!padded.defined()) return;
  te::Stage& st = s[padded];
  fuse_all_parallel(st, {padded.axis(0), padded.axis(1), padded.axis(2)});
}

void schedule_nchwc(te::Schedule& s, const te::Tensor& out, const te::Tensor& blocked, const Target& target) {
  const te::Tensor wp = find_tensor({out}, "weight_packed");  // undefined when prepacked
  te::Tensor w5;
  for (const te::Tensor& t : blocked->inputs())
    if (t.ndim() == 5) w5 = t;
  const int kb = int(*ir::as_const_int(blocked.shape()[4]));
  const int oh = int(*ir::as_const_int(out.shape()[2])), ow = int(*ir::as_const_int(out.shape()[3]));
  const int64_t batch = ir::as_const_int(out.shape()[0]).value_or(1);
  const int64_t blocks = *ir::as_const_int(blocked.shape()[1]);
  int64_t reduction = 1;
  for (int i = 1; i < 4; ++i) reduction *= *ir::as_const_int(w5.shape()[i]);
  const int lanes = vector_lanes_of(target);
  const int xb = conv2d_ow_block_for(ow, lanes >= 16 ? 8 : 6);

  schedule_padded(s, find_tensor({out}, "padded"));
  if (wp.defined()) {
    s[wp].parallel(wp.axis(0));
    s[wp].vectorize(wp.axis(4));
  }

  te::Stage& o = s[out];
  auto [ko, ki] = o.split(out.axis(1), kb);
  auto [xo, xi] = o.split(out.axis(3), xb);
  o.reorder({out.axis(0), ko, out.axis(2), xo, ki, xi});
  te::IterVar rows = o.fuse(o.fuse(out.axis(0), ko), out.axis(2));
  const int64_t per_task = conv2d_rows_per_task_for(batch * blocks * oh, reduction);
  if (per_task > 1) {
    auto [task, row] = o.split(rows, int(per_task));
    o.parallel(task);
  } else {
    o.parallel(rows);
  }
  // The NCHW store (and any fused epilogue) a vector of columns at a time, read from the tile's
  // channel-minor buffer with a stride: unrolled scalar stores made MobileNetV2 ~40 % slower.
  o.vectorize(xi);

  te::Stage& b = s[blocked];
  b.compute_at(o, xo);
  auto [bxo, bxi] = b.split(blocked.axis(3), xb);
  b.reorder({blocked.axis(0), blocked.axis(1), blocked.axis(2), bxo, blocked.reduce_axis(0), blocked.reduce_axis(1),
             blocked.reduce_axis(2), bxi, blocked.axis(4)});
  b.unroll(bxi);
  b.vectorize(blocked.axis(4));
}

// Tiles of rows x columns (and the batch) in parallel; per tile the output channels kt at a
// time, the reduction over the input channels outside a kt x rows x cols register tile
// (channels and rows unrolled, columns vectorised). The data tile stays in L1 across the
// channel blocks. out is conv (no epilogue) or its fused epilogue.
void schedule_pointwise(te::Schedule& s, const te::Tensor& out, const te::Tensor& conv) {
  const te::Tensor wp = find_tensor({out}, "weight_packed");  // undefined when prepacked
  if (wp.defined()) {
    s[wp].parallel(wp.axis(0));
    s[wp].vectorize(wp.axis(4));
  }
  const PointwiseTile t = pointwise_tile(*ir::as_const_int(out.shape()[2]), *ir::as_const_int(out.shape()[3]),
                                         *ir::as_const_int(out.shape()[1]));
  te::Tensor acc = conv;
  if (out.get() == conv.get()) acc = s.cache_write(conv, "local");
  te::Stage& o = s[out];
  auto [ko, ki] = o.split(out.axis(1), t.channels);
  auto [yo, yi] = o.split(out.axis(2), t.rows);
  auto [xo, xi] = o.split(out.axis(3), t.cols);
  o.reorder({out.axis(0), yo, xo, ko, ki, yi, xi});
  // xo stays a serial loop: with a guarded last column tile loop_partition peels it (a
  // constant-width tail) only there.
  fuse_all_parallel(o, {out.axis(0), yo});
  o.unroll(ki);
  o.unroll(yi);
  o.vectorize(xi);
  te::Stage& a = s[acc];
  a.compute_at(o, ko);
  a.reorder({acc.axis(0), acc.reduce_axis(0), acc.axis(1), acc.axis(2), acc.axis(3)});
  a.unroll(acc.axis(1));
  a.unroll(acc.axis(2));
  a.vectorize(acc.axis(3));
}

// Depthwise float32 with a static kernel window (one input channel per output channel): the
// plane-window schedule (nn_util.h), each plane's zero-padded input produced just before its
// rows; computed whole first, a batch-8 stride-2 layer at 112x112 wrote and re-read 40 MB and
// ran 10x slower than 8 batch-1 calls. 16-lane vectors with a peeled tail for rows of 56
// instead of the row's divisor 14 (LLVM widens and shuffles odd vectors lane by lane). False
// when it does not apply.
bool schedule_depthwise(te::Schedule& s, const te::Tensor& out, const te::Tensor& conv, const te::Tensor& padded,
                        const Target& target) {
  if (conv.dtype() != DataType::float32() || conv.reduce_axis().size() != 3 || out.ndim() != 4) return false;
  const std::optional<int64_t> rc = ir::as_const_int(conv.reduce_axis()[0]->dom().extent);
  if (!rc || *rc != 1) return false;
  return schedule_plane_window(s, out, conv, padded, target);
}

// outs[0] is the convolution or an elementwise epilogue of it (same NCHW shape) fused after it.
void conv2d_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  if (schedule_conv2d_few_channels(s, outs, target)) return;
  if (schedule_conv2d_rows(s, outs, target)) return;
  const te::Tensor& out = outs[0];
  if (schedule_depthwise_flat(s, outs, target)) return;
  inline_elementwise_except(s, outs, {"padded", "weight_packed"});
  if (te::Tensor pw = find_tensor(outs, "conv_pointwise"); pw.defined()) return schedule_pointwise(s, out, pw);
  te::Tensor blocked = find_tensor(outs, "conv_blocked");
  if (blocked.defined()) return schedule_nchwc(s, out, blocked, target);
  te::Tensor conv = find_tensor(outs, "conv2d");
  te::Tensor padded = find_tensor(outs, "padded");
  if (conv.defined() && schedule_depthwise(s, out, conv, padded, target)) return;
  schedule_padded(s, padded);
  schedule_row_reduction(s, out, conv.defined() ? conv : out, target);
}

// Stride equal to the kernel, no padding or dilation, one group, output exactly input x stride
// (PP-OCR's 2x2/2 upsampling): every output position has one tap, (y % sh, x % sw) of input
// (y / sh, x / sw). The taps are computed per tap column along contiguous input rows,
//   taps[n, o, iy, ry, rx, ix] = sum_c data[n, c, iy, ix] * w[c, o, ry, rx],
// and interleaved into the output: out[n, o, y, x] = taps[n, o, y/sh, y%sh, x%sw, x/sw]. A
// quarter of the gather form's products (for 2x2) and no selects. Empty when it does not apply.
std::vector<te::Tensor> transpose_by_taps(const graph::CallNode& call, const te::Tensor& data, const te::Tensor& weight,
                                          const ConvAttrs& c) {
  std::vector<PrimExpr> oshape = out_shape(call);
  auto cst = [](const PrimExpr& e) { return ir::as_const_int(e).value_or(-1); };
  const int64_t H = cst(data.shape()[2]), W = cst(data.shape()[3]), R = cst(weight.shape()[2]), S = cst(weight.shape()[3]);
  if (c.groups != 1 || c.dh != 1 || c.dw != 1 || c.pt || c.pl || c.pb || c.pr || H <= 0 || W <= 0 || c.sh != R ||
      c.sw != S || cst(oshape[2]) != H * R || cst(oshape[3]) != W * S || data.dtype() != DataType::float32())
    return {};
  te::IterVar rc = te::reduce_axis(0, data.shape()[1], "rc");
  te::Tensor taps = te::compute(
      {oshape[0], oshape[1], int(H), int(R), int(S), int(W)},
      [&](const std::vector<Var>& i) { return te::sum(data(i[0], rc, i[2], i[5]) * weight(rc, i[1], i[3], i[4]), {rc}); },
      "conv2d_transpose_taps");
  return {te::compute(
      oshape,
      [&](Var n, Var o, Var y, Var x) {
        return taps(n, o, ir::floordiv(y, int(R)), ir::floormod(y, int(R)), ir::floormod(x, int(S)), ir::floordiv(x, int(S)));
      },
      "conv2d_transpose")};
}

// Blocks of kt output channels x the sh output rows of one input row (and the batch) in
// parallel, the output vectorised along x (the interleave reads the taps with a stride). Per
// block its taps, a register tile of kt channels x the R·S taps x one vector of input columns,
// accumulated over the input channels (one input vector and kt·R·S broadcast weights per
// channel; one accumulator per output row made its sum a chain of dependent FMAs: PP-OCRv4
// det's 24 -> 24 2x2/2 at 160x160 ran 2.6x ONNX Runtime).
void schedule_transpose_by_taps(te::Schedule& s, const te::Tensor& out, const te::Tensor& taps, const Target& target) {
  const int64_t O = *ir::as_const_int(taps.shape()[1]), R = *ir::as_const_int(taps.shape()[3]),
                S = *ir::as_const_int(taps.shape()[4]);
  const int lanes = lanes_for(target, taps.dtype());
  int kt = 1;
  for (int k = int(std::max<int64_t>(1, (lanes >= 16 ? 16 : 8) / (R * S))); k >= 1; --k)
    if (O % k == 0) {
      kt = k;
      break;
    }
  te::Stage& st = s[out];
  auto [ko, ki] = st.split(out.axis(1), kt);
  auto [yo, yi] = st.split(out.axis(2), int(R));
  st.reorder({out.axis(0), ko, yo, ki, yi, out.axis(3)});
  te::IterVar block = fuse_all_parallel(st, {out.axis(0), ko, yo});
  const int vf = vector_factor(out.shape()[3], lanes);
  if (vf > 0) {
    auto [xo, xi] = st.split(out.axis(3), vf);
    st.vectorize(xi);
  }
  te::Stage& t = s[taps];
  t.compute_at(st, block);
  const int tvf = vector_factor(taps.shape()[5], lanes);
  if (tvf > 0) {
    auto [io, ii] = t.split(taps.axis(5), tvf);
    t.reorder({taps.axis(0), taps.axis(2), io, taps.reduce_axis(0), taps.axis(1), taps.axis(3), taps.axis(4), ii});
    t.unroll(taps.axis(1));
    t.unroll(taps.axis(3));
    t.unroll(taps.axis(4));
    t.vectorize(ii);
  }
}

// out[n, o, y, x] = sum over the input channels of o's group and the kernel window of
// data[n, ci, (y + pt - ry*dh) / sh, ...] * w[ci, o % Og, ry, rx], where the division is exact
// and inside the input (zero otherwise). Weight IOHW: [C, O/g, R, S].
std::vector<te::Tensor> conv2d_transpose_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const ConvAttrs c = conv_attrs(call);
  const te::Tensor& data = in[0];
  const te::Tensor& weight = in[1];
  if (std::vector<te::Tensor> taps = transpose_by_taps(call, data, weight, c); !taps.empty()) return taps;
  const PrimExpr H = data.shape()[2], W = data.shape()[3];
  const PrimExpr cg = ir::floordiv(data.shape()[1], c.groups), og = weight.shape()[1];
  te::IterVar rc = te::reduce_axis(0, cg, "rc"), ry = te::reduce_axis(0, weight.shape()[2], "ry"),
              rx = te::reduce_axis(0, weight.shape()[3], "rx");
  DataType dt = data.dtype();
  return {te::compute(
      out_shape(call),
      [&](Var n, Var o, Var y, Var x) {
        PrimExpr ci = c.groups == 1 ? PrimExpr(rc) : ir::floordiv(o, og) * cg + rc;
        PrimExpr oi = c.groups == 1 ? PrimExpr(o) : ir::floormod(o, og);
        PrimExpr ty = y + c.pt - ry * c.dh, tx = x + c.pl - rx * c.dw;
        PrimExpr iy = ir::floordiv(ty, c.sh), ix = ir::floordiv(tx, c.sw);
        PrimExpr ok = ty >= 0 && tx >= 0 && iy < H && ix < W;
        if (c.sh > 1) ok = ok && ir::eq(ir::floormod(ty, c.sh), 0);
        if (c.sw > 1) ok = ok && ir::eq(ir::floormod(tx, c.sw), 0);
        PrimExpr v = data(n, ci, clamp(iy, H), clamp(ix, W)) * weight(ci, oi, ry, rx);
        return te::sum(ir::select(ok, v, ir::make_zero(dt)), {rc, ry, rx});
      },
      "conv2d_transpose")};
}

// OIHW -> [O/b, I, R, S, b], the block vectorised.
std::vector<te::Tensor> pack_weight_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& w = in[0];
  const int b = int(graph::get_int(call.attrs(), "block"));
  return {te::compute(
      out_shape(call), [&](const std::vector<Var>& i) { return w(i[0] * b + i[4], i[1], i[2], i[3]); },
      "conv2d_pack_weight")};
}

}  // namespace

int conv2d_nchwc_block(const std::vector<PrimExpr>& data_shape, const std::vector<PrimExpr>& weight_oihw, DataType dtype,
                       int groups, const Target& target) {
  for (int i = 1; i < 4; ++i)
    if (!ir::as_const_int(data_shape[i])) return 0;
  for (int i = 0; i < 4; ++i)
    if (!ir::as_const_int(weight_oihw[i])) return 0;
  if (dtype != DataType::float32()) return 0;
  const int64_t og = *ir::as_const_int(weight_oihw[0]) / groups;
  if (*ir::as_const_int(weight_oihw[1]) == 1 && og == 1) return 0;  // depthwise: the row schedule
  const int lanes = vector_lanes_of(target);
  int kb = 2 * lanes;
  while (kb > 1 && og % kb != 0) kb /= 2;
  return kb >= std::min(8, lanes) ? kb : 0;
}

int conv2d_weight_block(const graph::CallNode& call, const Target& target) {
  const std::vector<PrimExpr>& x = call.args()[0].type().shape();
  const std::vector<PrimExpr>& w = call.args()[1].type().shape();
  const DataType dt = call.args()[0].type().dtype();
  if (const int kt = pointwise_block(call, x, w, dt, target); kt > 0) return kt;
  if (const RowsTile t = conv2d_rows_tile(call, x, w, dt, vector_lanes_of(target)); t.channels > 0) return t.channels;
  return conv2d_nchwc_block(x, w, dt, int(graph::get_int(call.attrs(), "groups", 1)), target);
}

void register_conv2d_strategies() {
  register_implementation("nn.conv2d_pack_weight", "cpu",
                          {"conv2d_pack_weight.x86", pack_weight_compute, schedule_injective});
  // The compute needs the target for its layout choice: the llvm host target's vector width
  // (the strategy table's compute has no target argument; "llvm" is the host's features).
  register_implementation("nn.conv2d", "cpu",
                          {"conv2d_nchw.x86",
                           [](const graph::CallNode& call, const std::vector<te::Tensor>& in) {
                             return conv2d_compute(call, in, Target::parse("llvm"));
                           },
                           conv2d_schedule});
  register_implementation("nn.conv2d_transpose", "cpu",
                          {"conv2d_transpose_nchw.x86", conv2d_transpose_compute,
                           [](te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
                             inline_elementwise_except(s, outs, {});  // any epilogue into the output
                             te::Tensor taps = find_tensor(outs, "conv2d_transpose_taps");
                             if (taps.defined()) return schedule_transpose_by_taps(s, outs[0], taps, target);
                             te::Tensor conv = find_tensor(outs, "conv2d_transpose");
                             schedule_row_reduction(s, outs[0], conv.defined() ? conv : outs[0], target);
                           }});
}

}  // namespace anvil::ops
