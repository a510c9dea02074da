// The nn family's CPU implementations, one registration function per file of ops/cpu, called
// from register_nn_strategies (ops/nn.cc).
#pragma once

#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/ir/expr.h"
#include "anvil/target/target.h"

namespace anvil::ops {

// Output channels per vector block of the NCHWc conv2d schedule for these shapes (OIHW weight
// shape), 0 when that schedule does not apply (symbolic channel/spatial dims, not float32,
// depthwise, too few channels per group). nn.conv2d with kernel_layout OIHW<block>o and a
// weight from nn.conv2d_pack_weight(block) then skips the in-kernel weight packing.
int conv2d_nchwc_block(const std::vector<ir::PrimExpr>& data_shape, const std::vector<ir::PrimExpr>& weight_oihw,
                       ir::DataType dtype, int groups, const Target& target);

// Panel width (columns) of the CPU GEMM for a float32 dense/matmul weight of N x K, the block of
// nn.dense_pack_weight; 0 when the packed GEMM does not apply (not float32).
int dense_panel_width(int64_t n, int64_t k, ir::DataType dtype, const Target& target);

// The weight block nn.conv2d's schedule wants for this call (OIHW weight): the pointwise 1x1
// schedule's channel tile where that applies, else conv2d_nchwc_block; 0 for neither.
int conv2d_weight_block(const graph::CallNode& call, const Target& target);

void register_conv2d_strategies();  // nn.conv2d, nn.conv2d_transpose (conv2d_generic.cc)
void register_conv3d_transpose_strategies();  // nn.conv3d_transpose (conv3d_transpose.cc)
void register_dense_strategies();   // nn.dense, matmul (dense.cc)
void register_pool_strategies();    // nn.max_pool2d, nn.avg_pool2d, global pools (pool.cc)
void register_norm_strategies();    // norms, lrn, softmax, log_softmax (norm.cc)

}  // namespace anvil::ops
