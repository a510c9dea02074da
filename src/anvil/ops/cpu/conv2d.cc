// conv2d NCHW float32: compute definition and default x86 schedule (see conv2d.h).
#include "anvil/ops/cpu/conv2d.h"

#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/vector_width.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {

using ir::PrimExpr;
using ir::Var;

std::string Conv2dShape::to_string() const {
  return std::to_string(in_channels) + "x" + std::to_string(height) + "x" + std::to_string(width) + " -> " +
         std::to_string(out_channels) + ", " + std::to_string(kernel_h) + "x" + std::to_string(kernel_w) + " s" +
         std::to_string(stride) + " p" + std::to_string(pad);
}

int conv2d_ow_block(const Conv2dShape& shape, const Conv2dSchedule& config) {
  int ow = shape.out_width();
  if (config.ow_block > 0) return std::min(config.ow_block, ow);
  // On AVX-512 at most 8 columns: 8 x (32 / 16) = 16 zmm accumulators. 14 columns (28
  // accumulators) measured 10-20 % slower on the AVX-512 machine (register pressure).
  const int max_block = std::max(1, config.max_ow_block);
  for (int b = std::min(max_block, ow); b > 1; --b)
    if (ow % b == 0) return b;
  return std::min(max_block, ow);  // prime widths: a guarded tail
}

namespace {

// Rows per task for a parallel loop over `rows` rows (conv2d_rows_per_task's rule).
int64_t rows_per_task_of(int64_t rows, int requested) {
  if (requested > 0) return std::min<int64_t>(requested, std::max<int64_t>(rows, 1));
  const int64_t least = std::max<int64_t>(1, (rows + kConv2dMaxTasks - 1) / kConv2dMaxTasks);
  for (int64_t f = least; f < 2 * least && f <= rows; ++f)
    if (rows % f == 0) return f;
  return least;
}

}  // namespace

int conv2d_rows_per_task(const Conv2dShape& shape, const Conv2dSchedule& config) {
  const int64_t rows = int64_t(shape.batch) * (shape.out_channels / std::max(1, config.oc_block)) * shape.out_height();
  const int64_t reduction = int64_t(shape.in_channels) * shape.kernel_h * shape.kernel_w;
  if (config.rows_per_task == 0 && reduction <= kConv2dShortReduction) return 1;
  return int(rows_per_task_of(rows, config.rows_per_task));
}

int64_t conv2d_rows_per_task_for(int64_t rows, int64_t reduction) {
  if (reduction <= kConv2dShortReduction) return 1;
  return rows_per_task_of(rows, 0);
}

int conv2d_ow_block_for(int ow, int max_ow_block) {
  const int max_block = std::max(1, max_ow_block);
  for (int b = std::min(max_block, ow); b > 1; --b)
    if (ow % b == 0) return b;
  return std::min(max_block, ow);
}

Conv2dSchedule conv2d_x86_config(const Conv2dShape& shape, const Target& target) {
  const int lanes = vector_lanes_of(target);
  Conv2dSchedule config;
  config.oc_block = 2 * lanes;
  while (config.oc_block > 1 && shape.out_channels % config.oc_block != 0) config.oc_block /= 2;
  config.max_ow_block = lanes >= 16 ? 8 : 6;  // 32 zmm registers, else 16 (ymm, xmm)
  return config;
}

Conv2d conv2d_nchw(const Conv2dShape& s, const Conv2dSchedule& config) {
  const char* where = "ops::conv2d_nchw";
  if (s.batch <= 0 || s.in_channels <= 0 || s.height <= 0 || s.width <= 0 || s.out_channels <= 0 || s.kernel_h <= 0 ||
      s.kernel_w <= 0 || s.stride <= 0 || s.pad < 0)
    value_error(where, ": sizes must be positive (padding non-negative), got ", s.to_string());
  if (s.height + 2 * s.pad < s.kernel_h || s.width + 2 * s.pad < s.kernel_w)
    value_error(where, ": the kernel is larger than the padded input: ", s.to_string());
  const int kb = config.oc_block;
  if (kb <= 0 || s.out_channels % kb != 0)
    value_error(where, ": oc_block ", kb, " must divide the output channels (", s.out_channels, ")");
  const int N = s.batch, C = s.in_channels, H = s.height, W = s.width, K = s.out_channels;
  const int R = s.kernel_h, S = s.kernel_w, st = s.stride, pad = s.pad;
  const int OH = s.out_height(), OW = s.out_width();
  DataType f32 = DataType::float32();

  Conv2d c;
  c.data = te::placeholder({N, C, H, W}, f32, "data");
  te::Tensor wpacked;
  if (config.pack_weight_in_kernel) {
    c.weight = te::placeholder({K, C, R, S}, f32, "weight");
    te::Tensor w = c.weight;
    c.packed_weight = te::compute({K / kb, C, R, S, kb}, [&](const std::vector<Var>& i) {
      return w(i[0] * kb + i[4], i[1], i[2], i[3]);
    }, "weight_packed");
    wpacked = c.packed_weight;
  } else {
    c.weight = te::placeholder({K / kb, C, R, S, kb}, f32, "weight");
    wpacked = c.weight;
  }
  te::Tensor data = c.data;
  // select() evaluates both sides: the read clamps its indices into the input.
  c.padded = te::compute({N, C, H + 2 * pad, W + 2 * pad}, [&](Var b, Var ch, Var y, Var x) {
    if (pad == 0) return data(b, ch, y, x);
    PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
    PrimExpr yy = ir::min(ir::max(y - pad, 0), H - 1), xx = ir::min(ir::max(x - pad, 0), W - 1);
    return ir::select(inside, data(b, ch, yy, xx), 0.0f);
  }, "padded");
  te::Tensor padded = c.padded;
  te::IterVar rc = te::reduce_axis(0, C, "rc"), ry = te::reduce_axis(0, R, "ry"), rx = te::reduce_axis(0, S, "rx");
  c.blocked = te::compute({N, K / kb, OH, OW, kb}, [&](const std::vector<Var>& i) {
    return te::sum(padded(i[0], rc, i[2] * st + ry, i[3] * st + rx) * wpacked(i[1], rc, ry, rx, i[4]), {rc, ry, rx});
  }, "conv_blocked");
  te::Tensor blocked = c.blocked;
  c.out = te::compute({N, K, OH, OW}, [&](Var b, Var k, Var y, Var x) {
    return blocked(b, ir::floordiv(k, kb), y, x, ir::floormod(k, kb));
  }, "conv2d");
  return c;
}

te::Schedule schedule_conv2d_nchw_x86(const Conv2d& c, const Conv2dShape& shape, const Conv2dSchedule& config) {
  te::Schedule s = te::create_schedule({c.out});
  const int kb = config.oc_block, xb = conv2d_ow_block(shape, config);

  // Padding and (optionally) weight packing: whole tensors first, parallel over their outer axes.
  if (shape.pad == 0) {
    s[c.padded].compute_inline();
  } else {
    te::IterVar pc = s[c.padded].fuse(c.padded.axis(0), c.padded.axis(1));
    const int64_t planes = int64_t(shape.batch) * shape.in_channels;
    if (planes >= kConv2dMaxTasks) {
      s[c.padded].parallel(pc);  // one task per plane (or one chunk per thread)
    } else {
      // Few planes (the RGB stem: 3): 3 tasks would leave 2 threads unevenly loaded; rows of
      // the planes in at most kConv2dMaxTasks tasks instead.
      te::IterVar prow = s[c.padded].fuse(pc, c.padded.axis(2));
      // The rows the convolution reads (bound inference allocates no more): OH·stride may stop
      // short of the padded height (the stem: 229 of 230).
      const int64_t padded_rows =
          planes * std::min(shape.height + 2 * shape.pad, (shape.out_height() - 1) * shape.stride + shape.kernel_h);
      auto [task, row] = s[c.padded].split(prow, int(rows_per_task_of(padded_rows, 0)));
      s[c.padded].parallel(task);
    }
  }
  if (c.packed_weight.defined()) {
    s[c.packed_weight].parallel(c.packed_weight.axis(0));
    s[c.packed_weight].vectorize(c.packed_weight.axis(4));
  }

  // Output: rows (n·ko·y) in parallel tasks of rows_per_task rows, then column tiles; each
  // tile's channels and columns innermost. Inside a task the loop order is the one of a single
  // thread: row by row, column tile by column tile.
  te::Stage& out = s[c.out];
  auto [ko, ki] = out.split(c.out.axis(1), kb);
  auto [xo, xi] = out.split(c.out.axis(3), xb);
  out.reorder({c.out.axis(0), ko, c.out.axis(2), xo, ki, xi});
  te::IterVar nk = out.fuse(c.out.axis(0), ko);
  te::IterVar rows = out.fuse(nk, c.out.axis(2));
  const int rows_per_task = conv2d_rows_per_task(shape, config);
  if (rows_per_task > 1) {
    auto [task, row] = out.split(rows, rows_per_task);
    out.parallel(task);
  } else {
    out.parallel(rows);
  }
  out.unroll(xi);

  // The register tile: reduction outside, columns unrolled, channels vectorized.
  te::Stage& blk = s[c.blocked];
  blk.compute_at(s[c.out], xo);
  const std::vector<te::IterVar> ax = {c.blocked.axis(0), c.blocked.axis(1), c.blocked.axis(2),
                                       c.blocked.axis(3), c.blocked.axis(4)};
  auto [bxo, bxi] = blk.split(ax[3], xb);
  blk.reorder({ax[0], ax[1], ax[2], bxo, c.blocked.reduce_axis(0), c.blocked.reduce_axis(1),
               c.blocked.reduce_axis(2), bxi, ax[4]});
  blk.unroll(bxi);
  blk.vectorize(ax[4]);
  return s;
}

std::vector<float> pack_conv2d_weight(const Conv2dShape& s, const float* oihw, int kb) {
  const int K = s.out_channels, C = s.in_channels, RS = s.kernel_h * s.kernel_w;
  std::vector<float> out(static_cast<size_t>(K) * C * RS);
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < C; ++c)
      for (int rs = 0; rs < RS; ++rs)
        out[((static_cast<size_t>(k / kb) * C + c) * RS + rs) * kb + k % kb] =
            oihw[(static_cast<size_t>(k) * C + c) * RS + rs];
  return out;
}

}  // namespace anvil::ops
