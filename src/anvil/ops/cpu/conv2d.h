// conv2d for CPUs: the NCHW float32 compute definition (zero padding, stride) and its default
// x86 schedule, in the NCHWc style of TVM's x86 conv2d, simplified:
//
//   padded[n, c, h, w]            = data with `pad` zeros around each plane (computed at root)
//   conv_blocked[n, ko, y, x, ki] = sum over (rc, ry, rx) of
//                                   padded[n, rc, y*stride+ry, x*stride+rx] * W[ko, rc, ry, rx, ki]
//   out[n, ko*oc_block+ki, y, x]  = conv_blocked[...]     (NCHW output, written per register tile)
//
// W is the weight packed as [K/oc_block, C, R, S, oc_block]: either a kernel argument packed
// ahead of time (pack_conv2d_weight; like constant-folded weight layouts in a compiled model)
// or computed from the OIHW weight inside the kernel (its cost then counts in the kernel).
// Schedule: one register tile = ow_block output columns × oc_block output channels, vectorized
// over the channels, columns unrolled, reduction loops (rc, ry, rx) outside the tile; the tile
// is written to the NCHW output right after its reduction. Parallel loop: the (batch × output-
// channel block × output row) axis fused and split into tasks of rows_per_task consecutive rows
// (conv2d_rows_per_task: at most 16 tasks, so that the code generators launch one task per
// iteration and the thread pool balances them; each task several whole rows; short reductions
// one row per iteration). The tile follows the target's vector width (conv2d_x86_config): two
// vectors of channels per column, and as many columns as keep the accumulators within the vector register
// file (AVX-512: 32 channels = 2 zmm × <= 8 columns; AVX2: 16 = 2 ymm × <= 6; SSE: 8 = 2 xmm × <= 6).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

struct Conv2dShape {
  int batch = 1, in_channels = 0, height = 0, width = 0;  // data: NCHW
  int out_channels = 0, kernel_h = 0, kernel_w = 0;       // weight: OIHW
  int stride = 1, pad = 0;
  int out_height() const { return (height + 2 * pad - kernel_h) / stride + 1; }
  int out_width() const { return (width + 2 * pad - kernel_w) / stride + 1; }
  double flops() const {
    return 2.0 * batch * out_channels * out_height() * out_width() * in_channels * kernel_h * kernel_w;
  }
  std::string to_string() const;  // "3x224x224 -> 64, 7x7 s2 p3"
};

struct Conv2dSchedule {
  int oc_block = 32;  // output channels per vector tile (must divide out_channels)
  int ow_block = 0;   // output columns per register tile; 0: largest divisor of out_width <= max_ow_block
  int max_ow_block = 8;  // bound of the automatic ow_block (accumulators: columns × oc_block / lanes)
  bool pack_weight_in_kernel = false;  // the kernel takes OIHW weights and packs them itself
  // Output rows (of one batch element and channel block; consecutive in n·ko·y order) per task of
  // the parallel loop; 0: automatic (conv2d_rows_per_task). 1: one row per iteration.
  int rows_per_task = 0;
};

// The tile for an "llvm" target, from its float32 vector width (vector_lanes_of: -mcpu, -mattr,
// else the host): oc_block = 2 vectors of channels (16 lanes: 32, 8 lanes: 16, 4 lanes: 8),
// halved while it does not divide out_channels (down to 1); max_ow_block = 8 with 32 vector
// registers (AVX-512: 16 accumulators), 6 with 16 (AVX2 and below: 12 accumulators, the rest
// for the weight vectors and the broadcast input). On AVX-512 it is the Conv2dSchedule default.
Conv2dSchedule conv2d_x86_config(const Conv2dShape& shape, const Target& target);

// The tensors of one conv2d: the arguments to pass to lower/build are {data, weight, out}.
struct Conv2d {
  te::Tensor data;     // [N, C, H, W]
  te::Tensor weight;   // [K/oc_block, C, R, S, oc_block] (prepacked) or [K, C, R, S] (packed inside)
  te::Tensor packed_weight;  // the in-kernel packing stage (undefined when prepacked)
  te::Tensor padded;   // [N, C, H + 2 pad, W + 2 pad]
  te::Tensor blocked;  // [N, K/oc_block, OH, OW, oc_block]
  te::Tensor out;      // [N, K, OH, OW]
  std::vector<te::Tensor> args() const { return {data, weight, out}; }
};

// The compute definition. ValueError for shapes that do not fit (non-positive sizes, an output
// of size 0, oc_block not dividing out_channels).
Conv2d conv2d_nchw(const Conv2dShape& shape, const Conv2dSchedule& config = {});

// The default x86 schedule of conv2d_nchw's tensors.
te::Schedule schedule_conv2d_nchw_x86(const Conv2d& conv, const Conv2dShape& shape, const Conv2dSchedule& config = {});

// Host-side weight packing: OIHW -> [K/oc_block, C, R, S, oc_block].
std::vector<float> pack_conv2d_weight(const Conv2dShape& shape, const float* oihw, int oc_block);

// The ow_block the schedule uses for this shape and config.
int conv2d_ow_block(const Conv2dShape& shape, const Conv2dSchedule& config);

// The rows per parallel task the schedule uses. The parallel loop runs over rows = batch ×
// (out_channels / oc_block) × out_height in ceil(rows / rows_per_task) tasks. Automatic: the
// smallest count that gives at most kConv2dMaxTasks tasks, raised to a divisor of rows when
// one lies below twice that (equal tasks, no tail guard); but 1 (one iteration per row) when the
// reduction C·R·S is at most kConv2dShortReduction. ResNet-18 at batch 1 (112 or 224 rows): 7 or
// 14 rows per task, 16 tasks; its 1x1 layers of 64 and 128 input channels 1 row. Why 16 and not the 64 that parallel_tasks.h would
// still launch one task per iteration: on the 2-vCPU AVX-512 machine 56 tasks of 2 rows ran
// 10–30 % slower on 2 threads than 2 chunks (the output lines a core wrote in the previous call
// move to the other core when tasks land on different threads each call, and each task has a
// fixed cost), while 8–16 tasks kept the chunked speed and still rebalance a slowed core
// (docs/performance.md, conv2d).
inline constexpr int kConv2dMaxTasks = 16;
// A short reduction makes the kernel mostly output writes: tasks claimed by a different thread
// on each call move those lines between the cores, and measured slower (2 threads, ResNet-18's
// 1x1 layer of 64 input channels: 0.44x of oneDNN against 0.53x with one chunk per thread).
// Such layers keep one iteration per row, which the code generators cut into one chunk per
// thread when there are more than 64 rows.
inline constexpr int kConv2dShortReduction = 128;
int conv2d_rows_per_task(const Conv2dShape& shape, const Conv2dSchedule& config);
// The same rule for `rows` output rows of a reduction of `reduction` terms (automatic only).
int64_t conv2d_rows_per_task_for(int64_t rows, int64_t reduction);
// The automatic column tile for an output row of `out_width` (conv2d_ow_block's rule).
int conv2d_ow_block_for(int out_width, int max_ow_block);

}  // namespace anvil::ops
