// nn.conv2d KxK with unit strides over large planes for CPUs ("conv_rows"): float32, one group,
// unit dilation, static shapes, at least 5 input channels, a kernel larger than
// 1x1 (the 1x1 case is conv_pointwise), output rows of at least kRowsMinWidth.
//
// The NCHWc tile (conv2d_generic.cc) vectorises over a block of output channels; with 24 output
// channels (PP-OCRv4 det's 96 -> 24 3x3 at 160x160 and 80x80) its block is 8, half a vector on
// AVX-512, and the NCHW store goes through a transpose (~85 GFLOP/s). Here the vector axis is the
// output row, as in the pointwise and few-channel kernels:
//
//   conv_rows_padded[n, c, y, x] = zero-padded data[n, c, y - pad_top, x - pad_left]
//   conv_rows[n, o, y, x] = sum over (c, ry, rx) of conv_rows_padded[n, c, y + ry, x + rx] * w[o, c, ry, rx]
//
// A register tile of channels x rows x cols (columns vectorised) takes per tap one broadcast
// weight per channel (weights [O/kt, C, R, S, kt]) and one contiguous, unaligned row load per
// tile row; the padded rows of a block of output rows are made inside its parallel task (they
// stay in L2) instead of the whole padded tensor first.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

// Rows of 20 (PP-OCRv4 det's 96 -> 24 at 20x20, computed as 32 columns): 1.30x ONNX Runtime
// here, 2.30x with the NCHWc tile; narrower rows are not taken.
inline constexpr int64_t kRowsMinWidth = 16;

// The register tile and output grid (compute and schedule share it): channels x rows x cols
// (cols a multiple of the vector lanes), parallel blocks of block_rows rows; the computed grid
// rounded up to (height, width), the output its crop. channels 0: the kernel does not apply.
struct RowsTile {
  int channels = 0, rows = 1, cols = 0, block_rows = 1;
  int64_t height = 0, width = 0;
};

// For a call's shapes (data NCHW, weight OIHW, static) on a target with `lanes` float lanes.
RowsTile conv2d_rows_tile(const graph::CallNode& call, const std::vector<ir::PrimExpr>& data_shape,
                          const std::vector<ir::PrimExpr>& weight_oihw, ir::DataType dtype, int lanes);

// The compute for `call` (weight OIHW or prepacked [O/b, C, R, S, b] per its kernel_layout);
// empty when the call does not qualify.
std::vector<te::Tensor> conv2d_rows_compute(const graph::CallNode& call, const te::Tensor& data,
                                            const te::Tensor& weight, const Target& target);

// Schedules outs (the convolution or an elementwise epilogue fused after it, outs[0]) when they
// come from conv2d_rows_compute: false otherwise (nothing changed).
bool schedule_conv2d_rows(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target);

}  // namespace anvil::ops
