// Compile-time weight layouts for the CPU schedules: rewrites every nn.conv2d whose weight is a
// constant (after canonicalize has folded batch norms into it) and whose shapes take the NCHWc
// schedule into nn.conv2d(data, nn.conv2d_pack_weight(weight; block), kernel_layout OIHW<block>o),
// so that a following fold_constant evaluates the packing once at compile time instead of every
// kernel call packing its OIHW weight (at batch 1 that packing costs about a third of ResNet-18's
// last 3x3 layers). Likewise nn.dense(x, w [N, K]) and matmul(x, w [K, N]) with a constant float32
// w (x of rank >= 2) become nn.dense(x, nn.dense_pack_weight(w; block, layout), weight_layout
// packed, units N): the GEMM's nr-wide B panels are made once, not by every call (issue 12:
// small-M GEMM must not pack all of B per call).
//
//   mod = ops::prepack_conv2d_weights(mod, target);   // then graph fold_constant
#pragma once

#include "anvil/graph/function.h"
#include "anvil/target/target.h"

namespace anvil::ops {

// Every function of the module; calls without a constant weight, and targets outside the "cpu"
// family, are left as they are. The rewritten calls keep their output types.
graph::IRModule prepack_conv2d_weights(const graph::IRModule& mod, const Target& target);
graph::Function prepack_conv2d_weights(const graph::Function& f, const Target& target);

}  // namespace anvil::ops
