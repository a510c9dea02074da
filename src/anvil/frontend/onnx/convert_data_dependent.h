// NonZero, Slice and Compress of values known only at run time: calls of the graph ops nonzero
// and dynamic_slice (graph/ops/data_dependent.cc), typed with fresh symbolic dims that the VM
// binds from their results.
#pragma once

#include "anvil/frontend/onnx/import_context.h"

namespace anvil::frontend::onnx {

// NonZero of input 0: Tensor[(max(rank, 1), n), int64] with n fresh.
graph::Expr nonzero_at_run_time(ImportContext& ctx);

// Slice (opset >= 10) whose starts, ends, axes or steps are not known at import: each axis in
// `axes` (the constant axes input, or 0..k-1; every axis when axes is a run-time value) gets a
// fresh extent. nullopt when all four are known.
std::optional<graph::Expr> slice_at_run_time(ImportContext& ctx);

// Compress (take of the indices nonzero(condition) gives), registered with the transform converters.
void register_data_dependent_converters();

}  // namespace anvil::frontend::onnx
