// Helpers the nn implementations (ops/cpu/{conv2d_generic,dense,pool,norm}.cc) share: finding
// the stages a compute made from the outputs a schedule receives, the vector factor for an
// axis, and the two common schedules (a sliding-window reduction vectorised along the output
// row; a reduction stage computed whole, in parallel, before an elementwise output).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"

namespace anvil::ops {

// The stage called `name` among the outputs and what they read (undefined when absent).
te::Tensor find_tensor(const std::vector<te::Tensor>& outputs, const std::string& name);

// The graph call's output dims (tensor-typed calls).
std::vector<ir::PrimExpr> out_shape(const graph::CallNode& call);

// float32 vector lanes of the target, scaled by the dtype's size.
int lanes_for(const Target& target, ir::DataType dtype);
// A vector factor for an axis of `extent`: `lanes`, halved while larger than a static extent
// (down to 4); 0 when even 4 does not fit (no vectorisation).
int vector_factor(const ir::PrimExpr& extent, int lanes);

// For a row computed a vector at a time into a local stage: the largest factor in [lanes/2, lanes]
// (at least 4) dividing a static extent (56 -> 14 of 16 lanes), since a tail tile's local stage
// gets a variable extent and is not vectorised; otherwise vector_factor.
int row_vector_factor(const ir::PrimExpr& extent, int lanes);

// `out` is a reduction over some axes whose last data axis is a contiguous output row (conv,
// pool). Accumulates a vector of the row in a local stage: leading axes fused and parallel,
// the row split by row_vector_factor, the reduction loops outside the vector lanes.
void schedule_row_reduction(te::Schedule& s, const te::Tensor& out, const Target& target);
// The same when `out` is an elementwise epilogue of the same shape over `reduction`: the
// reduction's vector computed at the output's vector loop.
void schedule_row_reduction(te::Schedule& s, const te::Tensor& out, const te::Tensor& reduction, const Target& target);

// A sliding-window reduction over NCHW planes (depthwise conv, pooling) whose input plane is
// first made whole with its padding (`padded`, may be undefined when there is none): planes
// (batch, channel) in parallel, the padded plane produced per plane just before its rows (still
// in L1/L2 when the taps read it; select_to_if + loop_partition make the copy contiguous), then
// per output row a vector at a time with the window unrolled outside the lanes, so every tap is
// one (strided: masked load + shuffle) vector load of the padded row. Rows of at least 48 or a
// multiple of 16 take 16 lanes and a guarded last vector that loop_partition peels; shorter rows
// row_vector_factor. `out` is `reduction` or an elementwise epilogue of it. False (nothing
// changed) when the row or the window is not static.
bool schedule_plane_window(te::Schedule& s, const te::Tensor& out, const te::Tensor& reduction,
                           const te::Tensor& padded, const Target& target);

// A row reduction split for vectors (norm.cc reduce_over) names its lane-wise partial stage
// "<name>" + kLanePartialSuffix; its last axis holds one vector of kReductionVectorBytes (the
// row's tail beyond its full vectors is a separate scalar reduction, "<name>_tail").
inline constexpr const char* kLanePartialSuffix = "_lanes";
inline constexpr int kReductionVectorBytes = 64;

// Every compute stage with a reduction axis reachable from `outputs` (not an output itself)
// computed at root with its outer axes fused and parallel (a lane-partial stage: its lane axis
// vectorised inside the reduction loop); the rest inlined; outputs by schedule_injective_output,
// or, when their last dim is symbolic or a constant not a multiple of the vector, rows parallel
// and each row in vectors with the guarded last one peeled. For normalisations and softmax.
void schedule_reductions_then_injective(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target);

// For schedules that may receive elementwise epilogues fused after their anchor stage (bias
// add, activation): inlines every non-output compute stage without a reduction whose name is
// not in `keep` (stages that must stay whole: padded inputs, packed weights).
void inline_elementwise_except(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                               const std::vector<std::string>& keep);

// Fuses all axes of a root stage into one parallel loop (when it has at least two axes'
// worth of work); returns the fused axis.
te::IterVar fuse_all_parallel(te::Stage& st, const std::vector<te::IterVar>& axes);

}  // namespace anvil::ops
