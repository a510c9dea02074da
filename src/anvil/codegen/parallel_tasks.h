// How many tasks the CPU code generators launch a parallel loop with (both llvm and c).
//
// A loop of at most kMaxTaskPerIteration iterations is coarse work (row blocks of a GEMM, the
// channels of a convolution): one task per iteration; the thread pool gives each thread a
// contiguous share and lets a thread that finished its share take over the rest of another's,
// so a core slowed down by a neighbour takes fewer blocks. A longer
// loop is fine-grained: one chunk per pool thread (num_task 0) keeps the launch cheap.
// A target with -num-cores=N always launches N tasks.
#pragma once

#include <cstdint>

namespace anvil::codegen {

inline constexpr int64_t kMaxTaskPerIteration = 64;

}  // namespace anvil::codegen
