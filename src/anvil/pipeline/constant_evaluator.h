// Evaluating a graph call at compile time (graph::passes::fold_constant's evaluator): the
// call's kernel is lowered through the strategy table for the host, JIT-compiled by LLVM and run
// on the constant arguments. Weight transposes, casts, reshapes of weights and the like then
// cost nothing at run time.
#pragma once

#include <cstdint>
#include <optional>

#include "anvil/graph/expr.h"
#include "anvil/runtime/tensor.h"

namespace anvil::pipeline {

// Bigger results are left to run time (they would bloat the artifact, e.g. a broadcast of a
// scalar to a large tensor).
inline constexpr int64_t kMaxFoldedBytes = 64 << 20;

// The call's value, or nullopt when it is not foldable here: an argument that is not a
// Constant or a static ShapeExpr, a result that is not one tensor of static shape or is larger
// than kMaxFoldedBytes, an op without a CPU implementation.
std::optional<Tensor> evaluate_constant_call(const graph::CallNode& call);

}  // namespace anvil::pipeline
