// Operators of the reduce family (filled in by its owner).
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {

void register_reduce_ops() {}

}  // namespace anvil::graph::ops
