// The gpu family's nn.conv2d compute: direct NCHW convolution with OIHW weights (groups,
// strides, padding, dilation), one output element per reduction over (input channel of the
// group, kernel row, kernel column); the zero padding is an injective stage the schedule
// inlines. The cpu compute is not reused: it picks packed NCHWc layouts for a CPU's vectors.
// A prepacked weight (kernel_layout other than "OIHW") is a NotImplementedError.
#pragma once

#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/te/tensor.h"

namespace anvil::ops::gpu {

std::vector<te::Tensor> conv2d_nchw_direct(const graph::CallNode& call, const std::vector<te::Tensor>& in);

}  // namespace anvil::ops::gpu
