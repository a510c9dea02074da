// Implementations of the reduce operators (filled in by its owner).
#include "anvil/ops/strategy.h"

namespace anvil::ops {

void register_reduce_strategies() {}

}  // namespace anvil::ops
