// nn.conv2d with few input channels (a model's first convolution over an RGB image: MobileNetV2's
// 3x224x224 -> 32 3x3/2, ResNet's 7x7/2, PP-OCR's 3x640x640 -> 16 3x3/2) for CPUs: float32, one
// group, at most kFewChannelsMax input channels, static shapes, unit dilation, strides up to 4.
//
// The NCHWc tile (conv2d_generic.cc) runs its reduction of only C·R·S = 27 (or 147) terms per
// tile and then stores the tile through a transpose; here the output row is the vector axis:
//
//   phases[n, c, y, p, j] = zero-padded data[n, c, y - pad_top, j*sw + p - pad_left]
//   conv_few_channels[n, o, y, x] = sum over (c, ry, rx) of
//       phases[n, c, y*sh + ry, rx % sw, x + rx / sw] * w[o, c, ry, rx]
//
// so that every tap reads a contiguous run of the (padded, stride-phase-split) input row, and a
// register tile of kt output channels x cols columns (vectors along x) takes one weight
// broadcast per channel and one input vector per tap. phases is produced per block of output
// rows inside the parallel loop (it stays in L1/L2) instead of a whole padded copy first.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

inline constexpr int kFewChannelsMax = 4;
inline constexpr int kFewChannelsMaxStride = 4;

// The compute for `call` (data, weight as OIHW or prepacked [O/b, C, R, S, b] per its
// kernel_layout); empty when the call does not qualify (see above).
std::vector<te::Tensor> conv2d_few_channels_compute(const graph::CallNode& call, const te::Tensor& data,
                                                    const te::Tensor& weight);

// Schedules outs (the convolution or an elementwise epilogue fused after it, outs[0]) when they
// come from conv2d_few_channels_compute: false otherwise (nothing changed).
bool schedule_conv2d_few_channels(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target);

// The output grid the compute and the schedule share: rows in parallel blocks of block_rows
// (tile_rows per register tile), the computed rows and columns rounded up (height, width) so
// that every register tile is whole; the output is the crop [0, OH) x [0, OW).
struct FewChannelsGrid {
  int block_rows = 1, tile_rows = 1;
  int64_t height = 0, width = 0;
};
FewChannelsGrid few_channels_grid(int64_t out_height, int64_t out_width);

// The register tile for `lanes` float32 lanes (16 AVX-512, 8 AVX2, 4 otherwise): channels
// output channels (a divisor of out_channels, unrolled) x grid.tile_rows rows x cols columns
// (one vector, or the whole narrow row).
struct FewChannelsTile {
  int channels = 1, cols = 0;
};
FewChannelsTile few_channels_tile(int64_t out_channels, const FewChannelsGrid& grid, int lanes);

}  // namespace anvil::ops
