// Shared by the transform family's converter files (convert_transform*.cc): known-value
// results, small int/float tensors, and the registration functions of each file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/graph/expr.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::frontend::onnx {

using graph::AttrValue;
using graph::Attrs;
using graph::Expr;
using ir::PrimExpr;
using Values = std::vector<PrimExpr>;

// Known values are tracked for tensors of at most this many elements (as the importer does).
inline constexpr int64_t kMaxKnown = 64;

Tensor int_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values,
                  DataType dtype = DataType::int64());
Tensor float_tensor(const std::vector<int64_t>& shape, const std::vector<double>& values);
// The elements of an integer tensor (int8..int64, uint8..uint32).
std::vector<int64_t> tensor_ints(const Tensor& t);
// Element i of a numeric tensor as a double.
double tensor_element(const Tensor& t, int64_t i);

// Records `values` as output `out`'s known values and returns its expression: a constant of
// `shape` when every value is a constant, else an undefined Expr (the importer materialises a
// known-only value on use, as a 1-d int64 shape_to_tensor; so a 0-d symbolic value then reads
// as shape [1]).
Expr known_result(ImportContext& ctx, int out, const Values& values, const std::vector<int64_t>& shape,
                  DataType dtype = DataType::int64());
// Input i's known values when it is 1-d (a known-only value, or a 1-d constant): the forms
// shape computations slice, gather and split element by element.
std::optional<Values> known_1d(ImportContext& ctx, int i);
// The dtype of input i when it is a constant integer tensor, else int64.
DataType known_dtype(ImportContext& ctx, int i);

void register_reshape_converters();         // Reshape Flatten Expand ConstantOfShape Range (convert_transform_reshape.cc)
void register_slice_converters();           // Slice Split Transpose Tile Pad (convert_transform_slice.cc)
void register_misc_transform_converters();
void register_einsum_converter();           // Einsum (convert_transform_einsum.cc)  // GatherElements Trilu OneHot DepthToSpace SpaceToDepth (convert_transform_misc.cc)

}  // namespace anvil::frontend::onnx
