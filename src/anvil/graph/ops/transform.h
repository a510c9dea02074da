// Index arithmetic the transform operators share between type inference (graph/ops/transform.cc),
// their TE computes (ops/transform.cc) and the ONNX importer: ONNX-style slice normalisation
// on static or symbolic dimensions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/ir/expr.h"

namespace anvil::graph::ops {

// Values at or beyond this magnitude in a slice's begin/end mean "to the end" (ONNX models
// write INT64_MAX, PyTorch INT32_MAX or 2^63 - 1).
inline constexpr int64_t kSliceUnbounded = int64_t{1} << 30;

struct SliceRange {
  ir::PrimExpr begin;   // first input index read (int32)
  ir::PrimExpr extent;  // number of elements taken (int32, >= 0)
};

// ONNX Slice semantics on one axis of extent `dim`: negative begin/end count from the end,
// both are clamped to the dim ([0, dim] for stride > 0, [-1, dim - 1] for stride < 0), the
// extent is ceil((end - begin) / stride) or 0. On a constant dim everything folds to
// constants; on a symbolic dim a non-negative begin/end below kSliceUnbounded is assumed to be
// within the dim (as the model promises). ValueError for stride 0.
SliceRange normalize_slice(const ir::PrimExpr& dim, int64_t begin, int64_t end, int64_t stride);

// A symbolic end (a dim expression, taken as >= 0 and within the dim, as the model promises);
// stride > 0 only (ValueError otherwise). A constant `end` takes the overload above.
SliceRange normalize_slice(const ir::PrimExpr& dim, int64_t begin, const ir::PrimExpr& end, int64_t stride);

// What a strided_slice call slices: per entry its normalised axis, range and stride. Its ends
// are the `end` attribute, except the entries listed in `end_from_shape`, whose ends are the
// values of the optional ShapeExpr argument 1, in order (symbolic ends: x[:, :seq_len]).
struct SliceSpec {
  std::vector<int> axes;
  std::vector<SliceRange> ranges;
  std::vector<int64_t> strides;
};
SliceSpec strided_slice_spec(const CallNode& call, const std::vector<ir::PrimExpr>& data_shape);

// Products of dims, compared and divided by their factors (a Mul tree splits into a constant
// and the other factors; equal factors cancel structurally), so N*S*12 / (N*3) is S*4.
struct DimFactors {
  int64_t constant = 1;
  std::vector<ir::PrimExpr> others;
};
DimFactors factor_dims(const std::vector<ir::PrimExpr>& dims);
// prod(num) / prod(den) when every non-constant factor of den cancels against one of num and
// the constants divide; nullopt otherwise.
std::optional<ir::PrimExpr> exact_quotient(const std::vector<ir::PrimExpr>& num, const std::vector<ir::PrimExpr>& den);
// Both products provably differ: their factors cancel completely and the constants differ.
bool products_differ(const std::vector<ir::PrimExpr>& a, const std::vector<ir::PrimExpr>& b);

// resize2d (resize.cc), registered with the transform family.
void register_resize_ops();
// gather_nd, scatter_elements, scatter_nd (gather_scatter.cc), registered with the transform family.
void register_gather_scatter_ops();

}  // namespace anvil::graph::ops
