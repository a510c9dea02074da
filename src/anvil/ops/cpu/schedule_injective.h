// The default CPU schedule of injective and elementwise kernels (and of the elementwise
// epilogues fused after other ops): every intermediate stage without a reduction inlined into
// its consumer; each output's innermost dimension split into vectors of the target's width
// (vectorized; the tail is guarded by loop_partition) and the other dimensions fused with the
// vector loop's outer part into one loop, parallel for outputs of at least
// kParallelMinElements elements. A broadcast operand's index then stays affine in the lanes.
// An innermost dimension shorter than a vector: the whole index space fused and vectorized.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

inline constexpr int64_t kParallelMinElements = 1 << 14;

// Inlines every compute stage that is not an output, has no reduction axis and is reachable
// from `outputs` (placeholders stay).
void inline_injective_stages(te::Schedule& s, const std::vector<te::Tensor>& outputs);

// Fuse + vectorize (+ parallel) one output stage. lanes: elements per vector for its dtype.
void schedule_injective_output(te::Schedule& s, const te::Tensor& out, const Target& target);

// Both, for every output: the ScheduleFn of injective implementations.
void schedule_injective(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

}  // namespace anvil::ops
