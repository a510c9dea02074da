// Helpers the operator families share for type inference: argument access with checks,
// numpy broadcasting of symbolic shapes, axis normalisation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anvil/graph/expr.h"

namespace anvil::graph::ops {

// The tensor type of argument i; TypeError "argument 1 is Tuple[...], expected a tensor" or
// "... of known rank" (require_rank).
const Type& tensor_arg(const CallNode& call, size_t i, bool require_rank = true);
// The values of argument i, which must be a ShapeExpr (TypeError otherwise).
const std::vector<PrimExpr>& shape_arg(const CallNode& call, size_t i);

// numpy broadcasting of two shapes: dims aligned from the right; equal dims (structurally),
// or one of them the constant 1. ValueError for two different constants. Two different
// symbolic dims: the result takes the first one that is not the constant 1 (the model
// promises they are equal at run time, as ONNX does; the kernel checks nothing).
std::vector<PrimExpr> broadcast_shapes(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b);

// axis in [-ndim, ndim) to [0, ndim); IndexError "axis 4 is out of range for rank 4".
int normalize_axis(int64_t axis, int ndim);
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim);  // also rejects duplicates

// Both arguments have the same dtype (TypeError naming both otherwise).
void check_same_dtype(const CallNode& call, size_t i, size_t j);

}  // namespace anvil::graph::ops
