// The "gpu" family's rows of the strategy table (being written).
#include "anvil/ops/strategy.h"

namespace anvil::ops {

void register_gpu_strategies() {}

}  // namespace anvil::ops
