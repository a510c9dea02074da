// Operators of the elementwise family (filled in by its owner).
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_elementwise_ops() {}

}  // namespace anvil::graph::ops
