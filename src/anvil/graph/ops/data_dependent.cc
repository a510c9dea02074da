// Operators whose result shape depends on tensor values, not only on the arguments' shapes:
//
//   nonzero(x) -> Tensor[(max(rank(x), 1), n), int64]       (ONNX NonZero; n: a fresh size Var)
//   dynamic_slice(x, starts, ends, steps; axes=[...]) -> x's dtype and rank; each sliced axis a
//       fresh size Var, the others x's dims (ONNX Slice with starts/ends/steps known only at
//       run time: 1-d int32/int64 tensors, one value per axis, clamped as Slice says).
//   dynamic_slice(x, starts, ends, steps, axes) -> the same with run-time axes (a fifth 1-d
//       integer tensor, negative axes counting from the end): every dim a fresh Var.
//   unique(x; sorted=0|1, axis=-1 for none, else a normalized axis)
//       -> Tuple[Y, indices (u,), inverse_indices (n,), counts (u,)] (ONNX Unique; int64 indices):
//       Y is x flattened to (u,), or x with its axis u long; u a fresh Var, n x's size or axis dim.
//   tensor_to_shape(t) -> Shape[(v0, ..., vk-1)]  (t a 1-d integer tensor of static length k):
//       t's values as a shape value whose values are fresh Vars, so later types and kernels can
//       use run-time integers (an Expand's shape, TopK's k, Trilu's k) as symbolic values.
//   reshape_target(x, t; allowzero) -> Shape[(v0, ..., vk-1)]: ONNX Reshape's target shape t
//       resolved against x's shape (0 copies x's dim unless allowzero, -1 is inferred).
//   range_length(start, limit, delta) -> Shape[(n)]  (0-d float64 tensors): ONNX Range's element
//       count max(ceil((limit - start) / delta), 0), n a fresh Var (a delta of 0 is a ValueError).
//
// Like if/loop their fresh dims cannot come from inference: the importer builds the Call with
// its type, the verifier checks its structure (check_data_dependent_type). kOpaque: lower_graph
// leaves them to the VM, whose builtins compute them on the host and whose bytecode binds the
// fresh dims from the result (vm_codegen's bind_result_dims), so later kernels size by them.
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

Type data_dependent_type(const CallNode& c) {
  value_error("the type of ", c.op(), " depends on its argument's values (a fresh symbolic dim), which inference cannot "
              "give; build it with Call::make and that type (as the ONNX importer does)");
}

bool same_dim(const PrimExpr& a, const PrimExpr& b) {
  std::optional<int64_t> x = ir::as_const_int(a), y = ir::as_const_int(b);
  return a.same_as(b) || (x && y && *x == *y);
}

// tensor_to_shape(t) / reshape_target(x, t): t a 1-d integer tensor of static length k, the
// result a Shape of k values, each a fresh Var.
std::string check_shape_from_values(const CallNode& c) {
  const bool reshape = c.op() == kReshapeTarget;
  if (c.args().size() != (reshape ? 2u : 1u)) return str_cat(c.op(), reshape ? " takes x and t" : " takes t");
  const Type& t = c.args().back().type();
  if (!t.is_tensor() || !t.has_rank() || t.ndim() != 1 || !(t.dtype().is_int() || t.dtype().is_uint()) ||
      !ir::as_const_int(t.dim(0)))
    return str_cat(c.op(), ": t must be a 1-d integer tensor of a static length, not ", to_string(t));
  const std::vector<PrimExpr>* values = c.type().shape_values();
  if (values == nullptr || static_cast<int64_t>(values->size()) != *ir::as_const_int(t.dim(0)))
    return str_cat(c.op(), " of ", to_string(t), " must be typed a Shape of ", *ir::as_const_int(t.dim(0)), " values");
  for (const PrimExpr& v : *values)
    if (v.as<ir::VarNode>() == nullptr) return str_cat(c.op(), ": each value of its Shape type must be a Var");
  return "";
}

// range_length(start, limit, delta): three 0-d float64 tensors, the result a Shape of one Var.
std::string check_range_length(const CallNode& c) {
  if (c.args().size() != 3) return "range_length takes start, limit and delta";
  for (const Expr& a : c.args()) {
    const Type& t = a.type();
    if (!t.is_tensor() || !t.has_rank() || t.ndim() != 0 || t.dtype() != DataType::float64())
      return str_cat("range_length: start, limit and delta must be 0-d float64 tensors, not ", to_string(t));
  }
  const std::vector<PrimExpr>* values = c.type().shape_values();
  if (values == nullptr || values->size() != 1 || (*values)[0].as<ir::VarNode>() == nullptr)
    return "range_length must be typed a Shape of one Var";
  return "";
}

}  // namespace

std::string check_data_dependent_type(const CallNode& c) {
  if (c.op() == kTensorToShape || c.op() == kReshapeTarget) return check_shape_from_values(c);
  if (c.op() == kRangeLength) return check_range_length(c);
  const Type& t = c.type();
  if (c.args().empty() || !c.args()[0].type().is_tensor() || !c.args()[0].type().has_rank())
    return str_cat(c.op(), ": the first argument must be a tensor of known rank");
  const Type& x = c.args()[0].type();
  if (c.op() != kUnique && (!t.is_tensor() || !t.has_rank())) return str_cat(c.op(), " must be typed a tensor of known rank");
  if (c.op() == kUnique) {
    if (c.args().size() != 1 || !t.is_tuple() || t.fields().size() != 4) return "unique takes x and gives 4 tensors";
    for (size_t k = 0; k < 4; ++k) {
      const Type& f = t.fields()[k];
      if (!f.is_tensor() || !f.has_rank() || f.dtype() != (k == 0 ? x.dtype() : DataType::int64()) ||
          (k > 0 && f.ndim() != 1))
        return str_cat("unique: result ", k, " must be ", k == 0 ? "a tensor of x's dtype" : "a 1-d int64 tensor");
    }
    return "";
  }
  if (c.op() == kNonZero) {
    if (c.args().size() != 1) return "nonzero takes one argument";
    if (t.dtype() != DataType::int64() || t.ndim() != 2 || !same_dim(t.dim(0), ir::int_imm(std::max(x.ndim(), 1))) ||
        t.dim(1).as<ir::VarNode>() == nullptr)
      return str_cat("nonzero of a rank-", x.ndim(), " tensor must be typed Tensor[(", std::max(x.ndim(), 1),
                     ", n), int64] with n a Var");
    return "";
  }
  if (c.args().size() != 4 && c.args().size() != 5) return "dynamic_slice takes x, starts, ends, steps (and axes)";
  if (t.dtype() != x.dtype() || t.ndim() != x.ndim()) return "dynamic_slice must be typed with its input's dtype and rank";
  const bool runtime_axes = c.args().size() == 5;
  if (runtime_axes == has_attr(c.attrs(), "axes")) return "dynamic_slice takes axes as the attribute or the fifth argument";
  std::vector<bool> sliced(static_cast<size_t>(x.ndim()), runtime_axes);
  for (int64_t a : runtime_axes ? std::vector<int64_t>{} : get_ints(c.attrs(), "axes")) {
    if (a < 0 || a >= x.ndim()) return str_cat("dynamic_slice: axis ", a, " is out of range for rank ", x.ndim());
    sliced[static_cast<size_t>(a)] = true;
  }
  for (int i = 0; i < x.ndim(); ++i) {
    if (sliced[static_cast<size_t>(i)] ? t.dim(i).as<ir::VarNode>() == nullptr : !same_dim(t.dim(i), x.dim(i)))
      return str_cat("dynamic_slice: dim ", i, " must be ", sliced[static_cast<size_t>(i)] ? "a Var (sliced)" : "the input's");
  }
  return "";
}

void register_data_dependent_ops() {
  register_op({kNonZero, 1, 1, OpPattern::kOpaque, data_dependent_type,
               "nonzero(x): the indices of x's non-zero elements, one row per axis (a fresh dim n)"});
  register_op({kUnique, 1, 1, OpPattern::kOpaque, data_dependent_type,
               "unique(x; sorted, axis): x's distinct values or slices, first indices, inverse indices, counts"});
  register_op({kTensorToShape, 1, 1, OpPattern::kOpaque, data_dependent_type,
               "tensor_to_shape(t): a 1-d integer tensor's run-time values as a shape value (fresh Vars)"});
  register_op({kReshapeTarget, 2, 2, OpPattern::kOpaque, data_dependent_type,
               "reshape_target(x, t; allowzero): ONNX Reshape's target t resolved against x's shape (fresh Vars)"});
  register_op({kRangeLength, 3, 3, OpPattern::kOpaque, data_dependent_type,
               "range_length(start, limit, delta): ONNX Range's element count at run time (a fresh Var)"});
  register_op({kDynamicSlice, 4, 5, OpPattern::kOpaque, data_dependent_type,
               "dynamic_slice(x, starts, ends, steps[, axes]; axes): a slice by values known at run time (fresh dims)"});
}

}  // namespace anvil::graph::ops
