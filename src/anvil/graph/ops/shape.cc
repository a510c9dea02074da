// Operators of the shape family (filled in by its owner).
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_shape_ops() {}

}  // namespace anvil::graph::ops
