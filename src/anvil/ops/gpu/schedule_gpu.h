// The default GPU schedules of the "gpu" family (vulkan; later cuda and opencl), shared by the
// rows of strategies_gpu.cc (and usable by other gpu schedules, e.g. matmul_gpu.cc's epilogues):
//
//  - bind_threads: one loop (a fused index space) split into workgroups of `threads`
//    invocations: threadIdx.x inside, blockIdx.x outside; when the number of workgroups may
//    exceed the device's maxComputeWorkGroupCount (65535 per axis, the Vulkan minimum), the
//    outer part is split once more into blockIdx.y x blockIdx.x with blockIdx.x's extent
//    min(workgroups, 65535), so small symbolic sizes still launch only the groups they need.
//  - schedule_injective_gpu: every intermediate injective stage inlined, each output's axes
//    fused into one loop and bound by bind_threads (one invocation per output element).
//  - schedule_rows_gpu: reductions and what follows them (sum/mean/argmax with their epilogues,
//    softmax, log_softmax, layer/rms/instance/group norm, pooling): each output's first
//    `row_rank(out)` axes fused and bound (one invocation per "row"), the remaining axes serial
//    inside it, and every intermediate reduction stage computed at the invocation (scope
//    "local"), so a row's statistics are computed once per row, not once per element. Outputs
//    that are reductions themselves keep their reduction serial inside the invocation. With
//    stages to attach, the rows are bound without overshoot (so those stages get constant,
//    invocation-local regions even for symbolic shapes): a constant row count split by its
//    largest divisor up to the thread count, a symbolic one as one workgroup per row (at most
//    maxComputeWorkGroupCount[0] rows: more is the runtime's ValueError at launch).
//
// The thread count: kGpuThreads, capped by the target's max_num_threads (vulkan_target.h).
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops::gpu {

inline constexpr int64_t kGpuThreads = 128;
inline constexpr int64_t kMaxWorkgroupsPerAxis = 65535;  // Vulkan's guaranteed maxComputeWorkGroupCount

// Invocations per workgroup for `target`: min(kGpuThreads, max_num_threads).
int64_t gpu_threads(const Target& target);

// Binds `axis` of `st` (an index space of `extent` iterations) to blockIdx[.y].x / threadIdx.x.
void bind_threads(te::Stage& st, const te::IterVar& axis, const ir::PrimExpr& extent, const Target& target);

// Inlines every compute stage without a reduction axis that is not an output (placeholders stay).
void inline_injective_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs);

// Fuses all data-parallel axes of `out` and binds them (a 0-d output gets one invocation).
void bind_output_gpu(te::Schedule& s, const te::Tensor& out, const Target& target);

// The ScheduleFn of injective ops on the gpu family.
void schedule_injective_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

// The ScheduleFn of reductions and row-wise ops (see above); row_rank: how many leading output
// axes make one invocation (clamped to [1, ndim]). schedule_reduce_gpu: every axis (one
// invocation per output element); schedule_row_wise_gpu: all but the innermost.
void schedule_rows_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target,
                       int row_rank);
void schedule_reduce_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);
void schedule_row_wise_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

}  // namespace anvil::ops::gpu
