// The nn family's CPU implementations, one registration function per file of ops/cpu, called
// from register_nn_strategies (ops/nn.cc).
#pragma once

namespace anvil::ops {

void register_conv2d_strategies();  // nn.conv2d, nn.conv2d_transpose (conv2d_generic.cc)
void register_dense_strategies();   // nn.dense, matmul (dense.cc)
void register_pool_strategies();    // nn.max_pool2d, nn.avg_pool2d, global pools (pool.cc)
void register_norm_strategies();    // norms, lrn, softmax, log_softmax (norm.cc)

}  // namespace anvil::ops
