// Operators of the nn family (filled in by its owner).
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_nn_ops() {}

}  // namespace anvil::graph::ops
