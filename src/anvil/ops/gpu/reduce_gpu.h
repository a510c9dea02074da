// The gpu family's workgroup reduction for sum / mean / max / min over the innermost axes
// (float32 / float64, a reduced extent K that is symbolic or at least kWorkgroupReduceMin):
// one workgroup per output element (row), whose kWorkgroupReduceThreads invocations each fold
// a strided slice of the row (elements t, t + T, t + 2T, ...: neighbouring invocations read
// neighbouring elements) into a shared-memory partial, then, after a workgroup barrier, the
// first invocation folds the T partials and writes the row's result (and the fused epilogue).
//
//   compute: workgroup_reduce_compute — the partials stage "<op>_wgpartial" ([rows..., T],
//            scope shared) and the final fold; every other case is the cpu row's compute.
//   schedule: schedule_workgroup_reduce — binds the above; without a "_wgpartial" stage it is
//            schedule_reduce_gpu (one invocation per output element, the reduction serial).
//
// The barrier comes from te lowering: a "shared" stage with a threadIdx-bound axis attached at
// a block loop is cooperative (te/loop_nest.cc puts workgroup_barrier_after around it).
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops::gpu {

inline constexpr int64_t kWorkgroupReduceThreads = 128;  // Vulkan guarantees 128 invocations
inline constexpr int64_t kWorkgroupReduceMin = 256;

std::vector<te::Tensor> workgroup_reduce_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in);

void schedule_workgroup_reduce(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

}  // namespace anvil::ops::gpu
