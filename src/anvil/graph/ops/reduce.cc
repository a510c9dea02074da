// Operators of the reduce family.
//
//   sum mean max min prod (data; axes: ints, empty or absent = all; keepdims 0/1, default 1)
//       -> data's dtype; numeric dtypes (an integer mean truncates, as ONNX Runtime)
//   argmax argmin (data; axis int (default 0), keepdims (default 1), select_last_index 0/1) -> int64
//   cumsum (data; axis int, exclusive 0/1, reverse 0/1) -> data's shape and dtype
//   topk (data; k int, axis (default -1), largest 0/1, sorted 0/1) -> (values, int64 indices),
//       the axis dimension replaced by k (which must not exceed a constant dimension)
// Float16/bfloat16 data is accepted where float is; the kernels accumulate in float32.
#include <algorithm>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

void check_numeric(const Type& t, bool float_only) {
  DataType d = t.dtype();
  bool ok = float_only ? d.is_float() : (d.is_float() || d.is_int() || d.is_uint());
  if (!ok) type_error("argument 0 has dtype ", d, ", expected ", float_only ? "a float dtype" : "an int, uint or float dtype");
}

// The reduced axes (sorted, normalised): all of them when `axes` is absent or empty.
std::vector<int> reduced_axes(const Attrs& attrs, int ndim) {
  std::vector<int64_t> axes = get_ints(attrs, "axes", {});
  std::vector<int> out;
  if (axes.empty()) {
    for (int i = 0; i < ndim; ++i) out.push_back(i);
  } else {
    out = normalize_axes(axes, ndim);
    std::sort(out.begin(), out.end());
  }
  return out;
}

std::vector<PrimExpr> reduced_shape(const std::vector<PrimExpr>& shape, const std::vector<int>& axes, bool keepdims) {
  std::vector<PrimExpr> out;
  for (int i = 0; i < static_cast<int>(shape.size()); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), i) != axes.end();
    if (!reduced) out.push_back(shape[i]);
    else if (keepdims) out.push_back(dim_expr(1));
  }
  return out;
}

void reduction(const std::string& name, bool float_only, std::string summary) {
  register_op({name, 1, 1, OpPattern::kCommReduce,
               [float_only](const CallNode& call) {
                 const Type& t = tensor_arg(call, 0);
                 check_numeric(t, float_only);
                 std::vector<int> axes = reduced_axes(call.attrs(), t.ndim());
                 bool keep = get_int(call.attrs(), "keepdims", 1) != 0;
                 return Type::tensor(reduced_shape(t.shape(), axes, keep), t.dtype());
               },
               std::move(summary)});
}

Type infer_arg_reduce(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  check_numeric(t, false);
  int axis = normalize_axis(get_int(call.attrs(), "axis", 0), t.ndim());
  bool keep = get_int(call.attrs(), "keepdims", 1) != 0;
  return Type::tensor(reduced_shape(t.shape(), {axis}, keep), DataType::int64());
}

Type infer_cumsum(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  check_numeric(t, false);
  normalize_axis(get_int(call.attrs(), "axis", 0), t.ndim());
  return t;
}

Type infer_topk(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  check_numeric(t, false);
  int axis = normalize_axis(get_int(call.attrs(), "axis", -1), t.ndim());
  std::vector<PrimExpr> shape = t.shape();
  std::optional<int64_t> d = ir::as_const_int(t.shape()[axis]);
  if (call.args().size() == 2) {  // k known only at run time: a Shape of one value (the kernel checks k <= n)
    const std::vector<PrimExpr>& k = shape_arg(call, 1);
    if (k.size() != 1) value_error("k must be a shape value of one value, got ", k.size());
    std::optional<int64_t> kc = ir::as_const_int(k[0]);
    if (kc && (*kc < 0 || (d && *kc > *d))) value_error("k is ", *kc, ", expected 0 <= k <= dimension ", axis);
    shape[axis] = k[0];
  } else {
    int64_t k = get_int(call.attrs(), "k");
    if (k < 0) value_error("k is ", k, ", expected k >= 0");
    if (d && k > *d) value_error("k is ", k, ", larger than dimension ", axis, " of size ", *d);
    shape[axis] = dim_expr(k);
  }
  return Type::tuple({Type::tensor(shape, t.dtype()), Type::tensor(shape, DataType::int64())});
}

}  // namespace

void register_reduce_ops() {
  reduction("sum", false, "sum over axes (attrs axes, keepdims)");
  reduction("mean", false, "mean over axes (attrs axes, keepdims)");
  reduction("max", false, "maximum over axes (attrs axes, keepdims)");
  reduction("min", false, "minimum over axes (attrs axes, keepdims)");
  reduction("prod", false, "product over axes (attrs axes, keepdims)");
  register_op({"argmax", 1, 1, OpPattern::kCommReduce, infer_arg_reduce,
               "index of the maximum along axis (int64; attrs axis, keepdims, select_last_index)"});
  register_op({"argmin", 1, 1, OpPattern::kCommReduce, infer_arg_reduce,
               "index of the minimum along axis (int64; attrs axis, keepdims, select_last_index)"});
  register_op({"cumsum", 1, 1, OpPattern::kOpaque, infer_cumsum, "running sum along axis (attrs exclusive, reverse)"});
  register_op({"topk", 1, 2, OpPattern::kOpaque, infer_topk,
               "k largest/smallest along axis -> (values, int64 indices); k an attr, or a Shape of one run-time value"});
}

}  // namespace anvil::graph::ops
