// NonZero, Slice, Compress and shape-like inputs of values known only at run time: calls of the
// graph ops nonzero, dynamic_slice, tensor_to_shape and reshape_target (graph/ops/data_dependent.cc),
// typed with fresh symbolic Vars that the VM binds from their results.
#pragma once

#include "anvil/frontend/onnx/import_context.h"

namespace anvil::frontend::onnx {

// NonZero of input 0: Tensor[(max(rank, 1), n), int64] with n fresh.
graph::Expr nonzero_at_run_time(ImportContext& ctx);

// Slice (opset >= 10) whose starts, ends, axes or steps are not known at import: each axis in
// `axes` (the constant axes input, or 0..k-1; every axis when axes is a run-time value) gets a
// fresh extent. nullopt when all four are known.
std::optional<graph::Expr> slice_at_run_time(ImportContext& ctx);

// Input i's integer values (a 0-d or 1-d tensor of static length) as a shape value whose
// values are fresh Vars bound at run time (graph op tensor_to_shape), so types and kernels can
// use them symbolically: Expand's shape, Tile's repeats, Trilu's k. A float input (OneHot's
// depth) is cast to int64 first. The Vars are named after the node's output and `what`.
graph::Expr values_at_run_time(ImportContext& ctx, int i, const std::string& what);
// A 1-d integer tensor of static length as such a shape value (tensor_to_shape).
graph::Expr values_of(ImportContext& ctx, const graph::Expr& t, const std::string& what);

// Split of x (opset >= 13) by sizes known only at run time (input 1): each output is sized by a
// Var of them and read at their prefix sum; sizes not >= 0 or not summing to the dim fail at run time.
std::vector<graph::Expr> split_at_run_time(ImportContext& ctx, const graph::Expr& x, int64_t axis);
// Pad's amounts (input 1, and axes input 3 when given, either known only at run time) as a shape
// value of 2 * rank Vars (begins then ends of every axis), checked at run time: dims stay >= 0,
// axes distinct and in range, non-constant modes pad by >= 0 (reflect by < the dim).
graph::Expr pad_amounts_at_run_time(ImportContext& ctx, const graph::Expr& x, const std::string& mode);
// Range whose start, limit or delta is known only at run time: its length from range_length (a
// host builtin, a fresh Var), the kernel reading start and delta.
graph::Expr range_at_run_time(ImportContext& ctx);

// ONNX Reshape's target (input 1) resolved at run time against input 0 (reshape_target).
graph::Expr reshape_target_at_run_time(ImportContext& ctx, bool allowzero);

// Compress (take of the indices nonzero(condition) gives), registered with the transform converters.
void register_data_dependent_converters();

}  // namespace anvil::frontend::onnx
