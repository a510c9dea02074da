// Implementations of the nn operators: the registrations live next to their schedules in
// ops/cpu (nn_strategies.h).
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {

void register_nn_strategies() {
  register_conv2d_strategies();
  register_conv3d_transpose_strategies();
  register_dense_strategies();
  register_pool_strategies();
  register_norm_strategies();
}

}  // namespace anvil::ops
