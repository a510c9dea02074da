// canonicalize: rewrites patterns into the forms later stages handle best.
//  * nn.batch_norm after nn.conv2d with a constant weight folds into the convolution: with
//    scale = gamma / sqrt(var + epsilon) per output channel, the weight becomes W * scale (each
//    output channel's filter scaled) and the batch norm becomes add(conv, bias) with
//    bias = beta - mean * scale as a [1, C, 1, 1] constant. A conv followed by add(bias
//    constant of C values in [1, C, 1, 1] or [C, 1, 1]) and then the batch norm folds the same way,
//    the bias taken into the new one. Applies when the batch norm's parameters are constants,
//    everything is float32, the axis is 1 of a 4-d tensor, and the conv (and its bias add) feed
//    only the batch norm.
//  * matmul(x, W) + b stays as it is: dense with bias is the fusion stage's pattern.
// Computation is in double, rounded to float32 once. f itself when nothing matched.
#pragma once

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

IRModule canonicalize(const IRModule& mod);
Function canonicalize(const Function& f);

}  // namespace anvil::graph::passes
