// Indexed reads and writes of the transform family (ONNX GatherND, ScatterElements, ScatterND);
// indices are integer tensors whose negative values count from the end.
//
//   gather_nd(data, indices; batch_dims)   indices [..., q] (q a constant) -> indices.shape[:-1] + data.shape[batch_dims + q:]
//   scatter_elements(data, indices, updates; axis, reduction none|add|mul|max|min) -> data's type
//   scatter_nd(data, indices, updates; reduction none|add|mul|max|min)              -> data's type
// (reduction "mul" is computed for at most 64 update positions per element: see ops/transform_scatter.cc.)
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/transform.h"

namespace anvil::graph::ops {
namespace {

const Type& index_arg(const CallNode& call, size_t i) {
  const Type& t = tensor_arg(call, i);
  if (!t.dtype().is_int() && !t.dtype().is_uint()) type_error("indices have dtype ", t.dtype(), ", expected an integer type");
  return t;
}

int last_dim(const Type& indices) {
  if (indices.ndim() < 1) value_error("indices are 0-d, expected at least rank 1");
  std::optional<int64_t> q = ir::as_const_int(indices.shape().back());
  if (!q) value_error("the last dim of indices is symbolic, expected a constant");
  return static_cast<int>(*q);
}

void check_reduction(const CallNode& call) {
  std::string r = get_string(call.attrs(), "reduction", "none");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    value_error("reduction '", r, "', expected none, add, mul, max or min");
}

Type gather_nd_type(const CallNode& call) {
  const Type& data = tensor_arg(call, 0);
  const Type& idx = index_arg(call, 1);
  int b = static_cast<int>(get_int(call.attrs(), "batch_dims", 0));
  int q = last_dim(idx);
  if (b < 0 || b >= idx.ndim() || b + q > data.ndim())
    value_error("batch_dims ", b, " with indices of last dim ", q, " do not fit data of rank ", data.ndim());
  std::vector<PrimExpr> out(idx.shape().begin(), idx.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + q, data.shape().end());
  return Type::tensor(out, data.dtype());
}

Type scatter_elements_type(const CallNode& call) {
  const Type& data = tensor_arg(call, 0);
  const Type& idx = index_arg(call, 1);
  const Type& upd = tensor_arg(call, 2);
  check_same_dtype(call, 0, 2);
  if (idx.ndim() != data.ndim() || upd.ndim() != data.ndim())
    value_error("indices and updates have ranks ", idx.ndim(), " and ", upd.ndim(), ", expected ", data.ndim(), " as data");
  normalize_axis(get_int(call.attrs(), "axis", 0), data.ndim());
  check_reduction(call);
  return data;
}

Type scatter_nd_type(const CallNode& call) {
  const Type& data = tensor_arg(call, 0);
  const Type& idx = index_arg(call, 1);
  const Type& upd = tensor_arg(call, 2);
  check_same_dtype(call, 0, 2);
  int q = last_dim(idx);
  if (q > data.ndim()) value_error("indices address ", q, " dims of rank-", data.ndim(), " data");
  int want = idx.ndim() - 1 + data.ndim() - q;
  if (upd.ndim() != want) value_error("updates have rank ", upd.ndim(), ", expected ", want);
  check_reduction(call);
  return data;
}

}  // namespace

void register_gather_scatter_ops() {
  register_op({"gather_nd", 2, 2, OpPattern::kInjective, gather_nd_type, "gather_nd(data, indices; batch_dims): ONNX GatherND"});
  register_op({"scatter_elements", 3, 3, OpPattern::kOpaque, scatter_elements_type,
               "scatter_elements(data, indices, updates; axis, reduction): ONNX ScatterElements"});
  register_op({"scatter_nd", 3, 3, OpPattern::kOpaque, scatter_nd_type,
               "scatter_nd(data, indices, updates; reduction): ONNX ScatterND"});
}

}  // namespace anvil::graph::ops
