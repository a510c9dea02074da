// Implementations of the transform operators (filled in by its owner).
#include "anvil/ops/strategy.h"

namespace anvil::ops {

void register_transform_strategies() {}

}  // namespace anvil::ops
