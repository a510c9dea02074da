// recognize_layer_norm: the layer normalisation that PyTorch exports before opset 17 (and many
// hand-written graphs) spelled out in elementwise ops and means, rewritten as one nn.layer_norm:
//
//   %m = mean(%x, axes=A, keepdims=1)          A: the trailing axes [a, ..., rank-1]
//   %d = subtract(%x, %m)
//   %p = power(%d, 2)  or  multiply(%d, %d)
//   %v = mean(%p, axes=A, keepdims=1)
//   %s = sqrt(add(%v, eps))                     eps: a scalar constant
//   %n = divide(%d, %s)
//   [%n = add(multiply(%n, gamma), beta)]       gamma, beta: constants shaped like the normalised dims
//   -> nn.layer_norm(%x, gamma[, beta], axis=a, epsilon=eps)   (gamma = ones when absent)
//
// Applies to float32 data when every intermediate value feeds only the next step of the pattern;
// f itself when nothing matched. One kernel (vectorised row statistics) instead of five.
#pragma once

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

IRModule recognize_layer_norm(const IRModule& mod);
Function recognize_layer_norm(const Function& f);

}  // namespace anvil::graph::passes
