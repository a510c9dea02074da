// Compute helpers shared by the elementwise and reduce kernels: numpy-broadcast indexing of
// an input against an output's index, conversions between any two element types with ONNX's
// meaning (bool <-> numbers, half precision through float32), and one elementwise compute
// stage built from a scalar formula.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/te/tensor.h"

namespace anvil::ops {

// The indices into `in` for output position `idx` (right-aligned, as numpy): a dimension that is
// the constant 1 reads index 0 (it is the broadcast one, or trivially 0).
std::vector<ir::PrimExpr> broadcast_index(const te::Tensor& in, const std::vector<ir::Var>& idx);

// float16 and bfloat16: the kernels compute them in float32 (cast in after the load, cast out
// before the store); every other dtype computes as itself.
bool is_half(ir::DataType t);
ir::DataType compute_dtype(ir::DataType t);
// x converted to `to`: to bool as x != 0, from bool as 1/0, otherwise a cast (float -> int
// truncates toward zero).
ir::PrimExpr convert(ir::DataType to, const ir::PrimExpr& x);

// out[idx] = convert(out_dtype, f(values)), values[i] = inputs[i] broadcast-loaded at idx and
// converted to compute_dtype of its dtype.
using ScalarFn = std::function<ir::PrimExpr(const std::vector<ir::PrimExpr>& values)>;
te::Tensor elementwise(const std::vector<te::Tensor>& inputs, const std::vector<ir::PrimExpr>& out_shape,
                       ir::DataType out_dtype, const ScalarFn& f, const std::string& name);

}  // namespace anvil::ops
