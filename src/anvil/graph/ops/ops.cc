// The list of operator families: adding a family adds a line here.
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_all_ops() {
  register_elementwise_ops();
  register_reduce_ops();
  register_nn_ops();
  register_transform_ops();
  register_shape_ops();
  register_fused_ops();
  register_control_flow_ops();
  register_data_dependent_ops();
}

}  // namespace anvil::graph::ops
