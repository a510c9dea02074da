// Depthwise convolution over small planes (MobileNetV2's 28x28, 14x14 and 7x7), computed along
// the flattened padded plane: with Wp the padded row length, at stride 1
//   acc[n, c, i] = sum_{ry, rx} w[c, ry, rx] * padded[n, c, i + ry * Wp + rx],  i < Ho * Wp,
//   conv[n, c, y, x] = acc[n, c, y * Wp + x],
// so every tap is one contiguous run of the plane and the vectors are full 16 (or 8) lanes
// regardless of the row length; the last Wp - Wo values of each row are computed and dropped.
// At stride 2 the padded rows are split by parity into two phase planes and a tap reads every
// second element of one (a load and a shuffle): acc[i] over i = y * Wp/2 + x. A row-at-a-time
// schedule used 7- or 14-lane vectors there (2-4x ONNX Runtime's time).
#pragma once

#include <vector>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

// The tensors of the flat form (the last is the NCHW "conv2d" output), or empty when it does not
// apply: float32, weight [C, 1, R, S] with one output channel per input channel, static dims,
// output rows that neither reach 48 (28 at stride 2) nor divide by 16 (those take full row
// vectors as they are).
// Padding per side: top, left, bottom, right; stride 1 or 2 (both axes), dilation 1.
std::vector<te::Tensor> depthwise_flat_compute(const te::Tensor& data, const te::Tensor& weight,
                                               const std::vector<int>& pad, int stride);

// Schedules outs (the conv2d output, or its fused elementwise epilogue) when they contain the
// flat form; false otherwise. Planes in parallel; per plane the padded copy, the flat
// accumulation (vectors of the target's lanes, taps unrolled), then the output rows.
bool schedule_depthwise_flat(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target);

}  // namespace anvil::ops
