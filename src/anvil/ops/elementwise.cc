// Implementations of the elementwise operators (filled in by its owner).
#include "anvil/ops/strategy.h"

namespace anvil::ops {

void register_elementwise_strategies() {}

}  // namespace anvil::ops
