// nn.conv2d over few input channels: the compute and schedule of conv2d_few_channels.h.
#include "anvil/ops/cpu/conv2d_few_channels.h"

#include <algorithm>
#include <optional>
#include <string>

#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/cpu/vector_width.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

constexpr const char* kConvName = "conv_few_channels";
constexpr const char* kPhasesName = "conv_few_padded";

std::optional<int64_t> cst(const PrimExpr& e) { return ir::as_const_int(e); }

PrimExpr clamp(const PrimExpr& v, const PrimExpr& hi) { return ir::min(ir::max(v, 0), hi - 1); }

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

}  // namespace

FewChannelsGrid few_channels_grid(int64_t out_height, int64_t out_width) {
  FewChannelsGrid g;
  // Rows per block: a divisor of the height in [4, 8] when there is one, else 8 (the last block
  // computes rows past the end, not stored).
  g.block_rows = int(std::min<int64_t>(8, out_height));
  for (int r = g.block_rows; r >= 4; --r)
    if (out_height % r == 0) {
      g.block_rows = r;
      break;
    }
  g.tile_rows = g.block_rows % 2 == 0 ? 2 : 1;
  g.height = round_up(out_height, g.block_rows);
  g.width = out_width < 8 ? out_width : round_up(out_width, out_width < 16 ? 8 : 16);
  return g;
}

FewChannelsTile few_channels_tile(int64_t out_channels, const FewChannelsGrid& grid, int lanes) {
  FewChannelsTile t;
  t.cols = grid.width % lanes == 0 ? lanes : int(grid.width);
  const int vectors = (t.cols + lanes - 1) / lanes * grid.tile_rows;
  // Accumulators: 16 of the 32 zmm registers (8 channels x 2 rows of one vector; the rest hold
  // input vectors and broadcast weights), 8 of the 16 with AVX2 and narrower. Measured on
  // ResNet-18's stem (AVX-512, 1 thread): 8 x 2 rows x 16 columns 0.95x ONNX Runtime, 16
  // channels x 1 row 1.08x, 8 x 32 columns 1.02x, 4 x 7 vectors (28) 6x (spills).
  const int budget = lanes >= 16 ? 16 : 8;
  for (int k = std::max(1, std::min(8, budget / vectors)); k >= 1; --k)
    if (out_channels % k == 0) {
      t.channels = k;
      break;
    }
  return t;
}

std::vector<te::Tensor> conv2d_few_channels_compute(const graph::CallNode& call, const te::Tensor& data,
                                                    const te::Tensor& weight) {
  const graph::Attrs& a = call.attrs();
  const std::vector<int64_t> st = graph::get_ints(a, "strides", {1, 1}), pad = graph::get_ints(a, "padding", {0, 0, 0, 0}),
                             dil = graph::get_ints(a, "dilation", {1, 1});
  if (graph::get_int(a, "groups", 1) != 1 || dil[0] != 1 || dil[1] != 1 || data.dtype() != ir::DataType::float32() ||
      data.ndim() != 4 || weight.ndim() < 4)
    return {};
  const int sh = int(st[0]), sw = int(st[1]), pt = int(pad[0]), pl = int(pad[1]);
  if (sh < 1 || sh > kFewChannelsMaxStride || sw < 1 || sw > kFewChannelsMaxStride) return {};
  // A symbolic batch keeps the NCHWc tile: here the phase buffer's batch range is not proven
  // a point, so it became a per-task workspace of symbolic size (3.7x slower on MobileNetV2's
  // stem at batch 1 than the static form).
  for (int i = 0; i < 4; ++i)
    if (!cst(data.shape()[i]) || !cst(weight.shape()[i])) return {};
  const int64_t C = *cst(data.shape()[1]), H = *cst(data.shape()[2]), W = *cst(data.shape()[3]);
  if (C > kFewChannelsMax || *cst(weight.shape()[1]) != C) return {};
  const std::string layout = graph::get_string(a, "kernel_layout", "OIHW");
  const int64_t packed = layout == "OIHW" ? 0 : std::stoll(layout.substr(4, layout.size() - 5));
  const std::vector<PrimExpr> oshape = out_shape(call);
  for (const PrimExpr& d : oshape)
    if (!cst(d) || *cst(d) < 1) return {};
  const int64_t R = *cst(weight.shape()[2]), S = *cst(weight.shape()[3]);
  const FewChannelsGrid g = few_channels_grid(*cst(oshape[2]), *cst(oshape[3]));

  // Padded rows, columns split into sw phases: column j*sw + p of the padded row is
  // phases[..., p, j], so tap rx of an output vector reads the run at x + rx/sw of phase rx%sw.
  // Sized for the rounded-up grid (rows and columns past the padding are zeros).
  const int64_t Hq = (g.height - 1) * sh + R;
  const int64_t Wq = g.width + (S - 1) / sw;
  const ir::DataType dt = data.dtype();
  te::Tensor phases = te::compute(
      {data.shape()[0], int(C), int(Hq), sw, int(Wq)},
      [&](const std::vector<Var>& i) {
        PrimExpr y = i[2] - pt, x = i[4] * sw + i[3] - pl;
        PrimExpr inside = y >= 0 && y < int(H) && x >= 0 && x < int(W);
        // select() evaluates both sides: the read clamps its indices into the input.
        return ir::select(inside, data(i[0], i[1], clamp(y, int(H)), clamp(x, int(W))), ir::make_zero(dt));
      },
      kPhasesName);
  auto w_at = [&](PrimExpr o, PrimExpr c, PrimExpr ry, PrimExpr rx) {
    if (!packed) return weight(o, c, ry, rx);
    return weight(ir::floordiv(o, int(packed)), c, ry, rx, ir::floormod(o, int(packed)));
  };
  te::IterVar rc = te::reduce_axis(0, int(C), "rc"), ry = te::reduce_axis(0, int(R), "ry"),
              rx = te::reduce_axis(0, int(S), "rx");
  te::Tensor conv = te::compute(
      {oshape[0], oshape[1], int(g.height), int(g.width)},
      [&](Var n, Var o, Var y, Var x) {
        PrimExpr v = phases(n, rc, y * sh + ry, ir::floormod(PrimExpr(rx), sw), x + ir::floordiv(PrimExpr(rx), sw));
        return te::sum(v * w_at(o, rc, ry, rx), {rc, ry, rx});
      },
      kConvName);
  if (g.height == *cst(oshape[2]) && g.width == *cst(oshape[3])) return {conv};
  // The rounded-up grid cropped (inlined into the output's store).
  return {te::compute(
      oshape, [&](Var n, Var o, Var y, Var x) { return conv(n, o, y, x); }, "conv_few_channels_crop")};
}

bool schedule_conv2d_few_channels(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  te::Tensor conv = find_tensor(outs, kConvName);
  if (!conv.defined()) return false;
  const te::Tensor& out = outs[0];
  inline_elementwise_except(s, outs, {kPhasesName});
  te::Tensor phases = find_tensor(outs, kPhasesName);
  const int lanes = vector_lanes_of(target);
  const FewChannelsGrid g = few_channels_grid(*cst(out.shape()[2]), *cst(out.shape()[3]));
  const FewChannelsTile t = few_channels_tile(*cst(out.shape()[1]), g, lanes);
  const int R = int(*cst(conv.reduce_axis()[1]->dom().extent)), S = int(*cst(conv.reduce_axis()[2]->dom().extent));

  te::Tensor acc = conv;
  if (out.same_as(conv)) acc = s.cache_write(conv, "local");
  // Output: (batch, row block) in parallel; per block rows of tile_rows, vectors of columns,
  // channel tiles. A rounded-up grid leaves a guarded last row block / column tile, which
  // loop_partition peels; the tile's accumulation (on the rounded grid) stays unguarded.
  te::Stage& o = s[out];
  auto [ko, ki] = o.split(out.axis(1), t.channels);
  auto [yb, yt] = o.split(out.axis(2), g.block_rows);
  auto [yto, yti] = o.split(yt, g.tile_rows);
  auto [xo, xi] = o.split(out.axis(3), t.cols);
  o.reorder({out.axis(0), yb, yto, xo, ko, ki, yti, xi});
  te::IterVar task = fuse_all_parallel(o, {out.axis(0), yb});
  o.unroll(ki);
  o.unroll(yti);
  o.vectorize(xi);
  // The block's padded input rows, made just before its output rows (L1/L2-resident when the
  // taps read them). Left serial: select_to_if + loop_partition then make the middle of each
  // row a plain copy (a vectorised select kept a gather per vector: 28 % of MobileNetV2's stem).
  s[phases].compute_at(o, task);
  // The register tile: channels x tile rows x one column vector, the reduction outside it, the
  // kernel row's taps unrolled (and the whole window when it is at most 3x3).
  te::Stage& a = s[acc];
  a.compute_at(o, ko);
  a.reorder({acc.axis(0), acc.reduce_axis(0), acc.reduce_axis(1), acc.reduce_axis(2), acc.axis(1), acc.axis(2),
             acc.axis(3)});
  if (R * S <= 9) a.unroll(acc.reduce_axis(1));
  a.unroll(acc.reduce_axis(2));
  a.unroll(acc.axis(1));
  a.unroll(acc.axis(2));
  a.vectorize(acc.axis(3));
  return true;
}

}  // namespace anvil::ops
