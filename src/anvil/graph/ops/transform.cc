// Operators of the transform family (filled in by its owner).
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_transform_ops() {}

}  // namespace anvil::graph::ops
