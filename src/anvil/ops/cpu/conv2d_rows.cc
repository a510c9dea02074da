// nn.conv2d KxK stride 1 vectorised along the output row: the compute and schedule of
// conv2d_rows.h.
#include "anvil/ops/cpu/conv2d_rows.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

// Up to 4 input channels (a model's first convolution over an image) conv_few_channels takes.
constexpr int64_t kMinChannels = 5;

constexpr const char* kConvName = "conv_rows";
constexpr const char* kPaddedName = "conv_rows_padded";
constexpr const char* kWeightName = "conv_rows_weight";

std::optional<int64_t> cst(const PrimExpr& e) { return ir::as_const_int(e); }

PrimExpr clamp(const PrimExpr& v, const PrimExpr& hi) { return ir::min(ir::max(v, 0), hi - 1); }

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

int64_t packed_block(const graph::CallNode& call) {
  const std::string layout = graph::get_string(call.attrs(), "kernel_layout", "OIHW");
  return layout == "OIHW" ? 0 : std::stoll(layout.substr(4, layout.size() - 5));
}

// Vectors per tile row: the most (up to want) whose rounded-up row wastes at most 1/8.
int vectors_for(int64_t width, int lanes, int want) {
  for (int v = want; v > 1; --v)
    if (round_up(width, int64_t(v) * lanes) * 8 <= width * 9) return v;
  return 1;
}

// Parallel blocks of rows: a divisor of the height in [4, 8] when there is one, else 8.
int block_rows_for(int64_t height) {
  const int most = int(std::min<int64_t>(8, height));
  for (int r = most; r >= 4; --r)
    if (height % r == 0) return r;
  return most;
}

}  // namespace

RowsTile conv2d_rows_tile(const graph::CallNode& call, const std::vector<PrimExpr>& data_shape,
                          const std::vector<PrimExpr>& weight_oihw, ir::DataType dtype, int lanes) {
  RowsTile t;
  const graph::Attrs& a = call.attrs();
  const std::vector<int64_t> st = graph::get_ints(a, "strides", {1, 1}), dil = graph::get_ints(a, "dilation", {1, 1});
  if (dtype != ir::DataType::float32() || graph::get_int(a, "groups", 1) != 1 || st[0] != 1 || st[1] != 1 ||
      dil[0] != 1 || dil[1] != 1 || data_shape.size() != 4 || weight_oihw.size() != 4 || lanes < 8)
    return t;
  for (int i = 1; i < 4; ++i)
    if (!cst(data_shape[i])) return t;
  for (int i = 0; i < 4; ++i)
    if (!cst(weight_oihw[i])) return t;
  const int64_t C = *cst(data_shape[1]), O = *cst(weight_oihw[0]), R = *cst(weight_oihw[2]),
                S = *cst(weight_oihw[3]);
  const std::vector<PrimExpr> oshape = out_shape(call);
  if (!cst(oshape[2]) || !cst(oshape[3])) return t;
  const int64_t OH = *cst(oshape[2]), OW = *cst(oshape[3]);
  if (C < kMinChannels || R * S < 2 || OW < kRowsMinWidth || OH < 4) return t;
  // Output channels in whole vectors: the NCHWc tile measured as fast or faster there (ResNet-18's
  // 64 -> 64 3x3 at 56x56, 1 thread: 1.04x ONNX Runtime, 1.20x here).
  if (O % lanes == 0 && !std::getenv("ANVIL_ROWS_TILE")) return t;
  // Accumulators: 24 of the 32 zmm registers (the rest hold row vectors and broadcasts), 8 of
  // the 16 ymm with AVX2.
  int want_k = lanes >= 16 ? 6 : 4, want_v = 2;
  t.rows = 2;
  if (lanes < 16) want_v = 2, t.rows = 1;
  if (const char* e = std::getenv("ANVIL_ROWS_TILE")) std::sscanf(e, "%d,%d,%d", &want_k, &t.rows, &want_v);
  for (int k = want_k; k >= 1; --k)
    if (O % k == 0) {
      t.channels = k;
      break;
    }
  t.block_rows = block_rows_for(OH);
  if (t.block_rows % t.rows != 0) t.rows = 1;
  t.cols = vectors_for(OW, lanes, want_v) * lanes;
  t.height = round_up(OH, t.block_rows);
  t.width = round_up(OW, t.cols);
  return t;
}

std::vector<te::Tensor> conv2d_rows_compute(const graph::CallNode& call, const te::Tensor& data,
                                            const te::Tensor& weight, const Target& target) {
  if (data.ndim() != 4 || weight.ndim() < 4) return {};
  const int64_t packed = packed_block(call);
  for (int i = 0; i < 4; ++i)
    if (!cst(weight.shape()[i])) return {};
  const int64_t O = packed ? *cst(weight.shape()[0]) * packed : *cst(weight.shape()[0]);
  const std::vector<PrimExpr> woihw = {int(O), weight.shape()[1], weight.shape()[2], weight.shape()[3]};
  const RowsTile t = conv2d_rows_tile(call, data.shape(), woihw, data.dtype(), vector_lanes_of(target));
  if (t.channels == 0) return {};
  const std::vector<int64_t> pad = graph::get_ints(call.attrs(), "padding", {0, 0, 0, 0});
  const int pt = int(pad[0]), pl = int(pad[1]);
  const int64_t C = *cst(data.shape()[1]), H = *cst(data.shape()[2]), W = *cst(data.shape()[3]);
  const int64_t R = *cst(weight.shape()[2]), S = *cst(weight.shape()[3]);
  const std::vector<PrimExpr> oshape = out_shape(call);
  const ir::DataType dt = data.dtype();
  // Sized for the rounded-up grid (rows and columns past the padding are zeros).
  te::Tensor padded = te::compute(
      {data.shape()[0], int(C), int(t.height + R - 1), int(t.width + S - 1)},
      [&](Var n, Var c, Var y, Var x) {
        PrimExpr yy = y - pt, xx = x - pl;
        PrimExpr inside = yy >= 0 && yy < int(H) && xx >= 0 && xx < int(W);
        // select() evaluates both sides: the read clamps its indices into the input.
        return ir::select(inside, data(n, c, clamp(yy, int(H)), clamp(xx, int(W))), ir::make_zero(dt));
      },
      kPaddedName);
  // Weights [O/kt, C, R, S, kt]: a tap's kt broadcasts are contiguous (the compile-time packing
  // pass makes this layout; conv2d_weight_block asks for kt).
  const int kt = t.channels;
  te::Tensor wp = weight;
  if (packed != kt) {
    auto w_at = [&](PrimExpr o, PrimExpr c, PrimExpr ry, PrimExpr rx) {
      if (!packed) return weight(o, c, ry, rx);
      return weight(ir::floordiv(o, int(packed)), c, ry, rx, ir::floormod(o, int(packed)));
    };
    wp = te::compute(
        {int(O / kt), int(C), int(R), int(S), kt},
        [&](const std::vector<Var>& i) { return w_at(i[0] * kt + i[4], i[1], i[2], i[3]); }, kWeightName);
  }
  te::IterVar rc = te::reduce_axis(0, int(C), "rc"), ry = te::reduce_axis(0, int(R), "ry"),
              rx = te::reduce_axis(0, int(S), "rx");
  te::Tensor conv = te::compute(
      {oshape[0], oshape[1], int(t.height), int(t.width)},
      [&](Var n, Var o, Var y, Var x) {
        return te::sum(padded(n, rc, y + ry, x + rx) * wp(ir::floordiv(o, kt), rc, ry, rx, ir::floormod(o, kt)),
                       {rc, ry, rx});
      },
      kConvName);
  if (t.height == *cst(oshape[2]) && t.width == *cst(oshape[3])) return {conv};
  // The rounded-up grid cropped (inlined into the output's store).
  return {te::compute(
      oshape, [&](Var n, Var o, Var y, Var x) { return conv(n, o, y, x); }, "conv_rows_crop")};
}

bool schedule_conv2d_rows(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  te::Tensor conv = find_tensor(outs, kConvName);
  if (!conv.defined()) return false;
  const te::Tensor& out = outs[0];
  inline_elementwise_except(s, outs, {kPaddedName, kWeightName});
  te::Tensor padded = find_tensor(outs, kPaddedName);
  te::Tensor wp;
  for (const te::Tensor& in : conv->inputs())
    if (in.ndim() == 5) wp = in;
  if (te::Tensor w = find_tensor(outs, kWeightName); w.defined()) {
    s[w].parallel(w.axis(0));
    s[w].vectorize(w.axis(4));
  }
  const int lanes = vector_lanes_of(target);
  const int kt = int(*cst(wp.shape()[4]));
  const int64_t height = *cst(conv.shape()[2]), width = *cst(conv.shape()[3]);
  // The compute's grid (chosen for the host's lanes); this target's tile: columns that divide
  // the grid's width, rows that divide its row blocks, kt fixed by the weight layout.
  const int block_rows = block_rows_for(*cst(out.shape()[2]));
  int rows = 2, vectors = 2;
  if (lanes < 16) rows = 1;
  if (const char* e = std::getenv("ANVIL_ROWS_TILE")) {
    int k = 0;
    std::sscanf(e, "%d,%d,%d", &k, &rows, &vectors);
  }
  if (block_rows % rows != 0 || height % block_rows != 0) rows = 1;
  int cols = vectors * lanes;
  while (cols > 4 && width % cols != 0) cols = cols > lanes ? cols - lanes : cols / 2;

  te::Tensor acc = conv;
  if (out.same_as(conv)) acc = s.cache_write(conv, "local");
  // Output: (batch, row block) in parallel; per block rows of `rows`, vectors of columns,
  // channel tiles. A rounded-up grid leaves a guarded last row block / column tile, which
  // loop_partition peels; the tile's accumulation (on the rounded grid) stays unguarded.
  te::Stage& o = s[out];
  auto [ko, ki] = o.split(out.axis(1), kt);
  auto [yb, yt] = o.split(out.axis(2), block_rows);
  auto [yto, yti] = o.split(yt, rows);
  auto [xo, xi] = o.split(out.axis(3), cols);
  o.reorder({out.axis(0), yb, yto, xo, ko, ki, yti, xi});
  te::IterVar task = fuse_all_parallel(o, {out.axis(0), yb});
  o.unroll(ki);
  o.unroll(yti);
  o.vectorize(xi);
  // The block's padded input rows, made just before its output rows, a vector at a time.
  te::Stage& p = s[padded];
  p.compute_at(o, task);
  if (*cst(padded.shape()[3]) >= lanes) {
    auto [jo, ji] = p.split(padded.axis(3), lanes);
    p.vectorize(ji);
  }
  // The register tile: kt channels x rows x cols, the reduction outside it, the window's taps
  // unrolled.
  const int R = int(*cst(conv.reduce_axis()[1]->dom().extent)), S = int(*cst(conv.reduce_axis()[2]->dom().extent));
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
