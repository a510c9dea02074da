// Operators of the transform family: type inference. Dims may be symbolic (int32 PrimExprs);
// shapes passed as values are ShapeExprs that the importer has fully resolved (no -1 or 0).
//
//   reshape(data, shape: ShapeExpr)            transpose(data; axes (empty: reversed))
//   expand_dims(data; axes: positions in the output)   squeeze(data; axes (empty: every 1))
//   broadcast_to(data, shape: ShapeExpr)       (numpy bidirectional broadcast, as ONNX Expand)
//   concat(tensors...; axis)                   split(data; axis, indices: split points) -> tuple
//                                              (split(data, sizes: Shape; axis): run-time sizes, Vars)
//   strided_slice(data[, ends: ShapeExpr]; begin, end, strides, axes, end_from_shape)  (ONNX Slice
//                                              semantics; symbolic ends from the ShapeExpr, see transform.h)
//   take(data, indices; axis)                  (Gather: negative indices wrap)
//   tile(data; reps)   pad(data[, value]; pads (begins then ends), mode constant|reflect|edge|wrap, pad_value;
//                          a value argument, one element, is the fill at run time; a last Shape
//                          argument of 2 * rank values, the amounts at run time)   copy(data)
//   full(shape: ShapeExpr; value, dtype)       arange(; start, limit, delta, dtype)
//   arange(length: Shape, start, delta: 0-d tensors; dtype)  (ONNX Range of run-time values)
//   gather_elements(data, indices; axis)  trilu(data; k, upper)  one_hot(indices, values; depth, axis)
//   depth_to_space(data; blocksize, mode)  space_to_depth(data; blocksize)
#include "anvil/graph/ops/transform.h"

#include <algorithm>
#include <cmath>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/ops.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::graph::ops {
namespace {

using ir::as_const_int;

std::string dims_str(const std::vector<PrimExpr>& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + ir::to_string(s[i]);
  return out + ")";
}

// Provably different (both constant and unequal, or a constant difference).
bool provably_different(const PrimExpr& a, const PrimExpr& b) {
  std::optional<int64_t> d = as_const_int(arith::simplify(a - b));
  return d && *d != 0;
}

Type reshape_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  const std::vector<PrimExpr>& target = shape_arg(call, 1);
  for (const PrimExpr& d : target) {
    std::optional<int64_t> c = as_const_int(d);
    if (c && *c < 0) value_error("target shape ", dims_str(target), " has a negative dim (the importer resolves -1)");
  }
  if (products_differ(t.shape(), target))
    value_error("cannot reshape ", dims_str(t.shape()), " (", ir::to_string(num_elements(t.shape())), " elements) to ",
                dims_str(target), " (", ir::to_string(num_elements(target)), " elements)");
  return Type::tensor(target, t.dtype());
}

Type transpose_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  int n = t.ndim();
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes", {});
  if (axes.empty())
    for (int i = n - 1; i >= 0; --i) axes.push_back(i);
  if (static_cast<int>(axes.size()) != n) value_error("axes has ", axes.size(), " entries for a rank-", n, " tensor");
  std::vector<int> norm = normalize_axes(axes, n);
  std::vector<PrimExpr> out;
  for (int a : norm) out.push_back(t.shape()[a]);
  return Type::tensor(out, t.dtype());
}

Type expand_dims_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes");
  int out_rank = t.ndim() + static_cast<int>(axes.size());
  std::vector<int> norm = normalize_axes(axes, out_rank);
  std::vector<PrimExpr> out;
  size_t k = 0;
  for (int i = 0; i < out_rank; ++i) {
    if (std::find(norm.begin(), norm.end(), i) != norm.end()) out.push_back(ir::int_imm(1));
    else out.push_back(t.shape()[k++]);
  }
  return Type::tensor(out, t.dtype());
}

Type squeeze_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  std::vector<int64_t> axes = get_ints(call.attrs(), "axes", {});
  std::vector<int> norm = normalize_axes(axes, t.ndim());
  std::vector<PrimExpr> out;
  for (int i = 0; i < t.ndim(); ++i) {
    std::optional<int64_t> c = as_const_int(t.shape()[i]);
    bool listed = std::find(norm.begin(), norm.end(), i) != norm.end();
    if (listed && c && *c != 1) value_error("axis ", i, " has extent ", *c, " in ", dims_str(t.shape()), ", expected 1");
    bool drop = axes.empty() ? (c && *c == 1) : listed;
    if (!drop) out.push_back(t.shape()[i]);
  }
  return Type::tensor(out, t.dtype());
}

Type broadcast_to_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  return Type::tensor(broadcast_shapes(t.shape(), shape_arg(call, 1)), t.dtype());
}

Type concat_type(const CallNode& call) {
  const Type& t0 = tensor_arg(call, 0);
  int n = t0.ndim();
  if (n == 0) value_error("cannot concatenate 0-d tensors");
  int axis = normalize_axis(get_int(call.attrs(), "axis"), n);
  std::vector<PrimExpr> out = t0.shape();
  for (size_t i = 1; i < call.args().size(); ++i) {
    const Type& t = tensor_arg(call, i);
    check_same_dtype(call, 0, i);
    if (t.ndim() != n) value_error("argument ", i, " has rank ", t.ndim(), ", expected ", n, " as argument 0");
    for (int d = 0; d < n; ++d) {
      if (d == axis) continue;
      if (provably_different(t.shape()[d], out[d]))
        value_error("argument ", i, " has shape ", dims_str(t.shape()), ", expected ", dims_str(t0.shape()),
                    " except on axis ", axis);
    }
    out[axis] = arith::simplify(out[axis] + t.shape()[axis]);
  }
  return Type::tensor(out, t0.dtype());
}

Type split_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  int axis = normalize_axis(get_int(call.attrs(), "axis"), t.ndim());
  if (call.args().size() == 2) {  // sizes known at run time: a Shape of Vars, one piece each
    std::vector<Type> fields;
    for (const PrimExpr& size : shape_arg(call, 1)) {
      std::vector<PrimExpr> s = t.shape();
      s[axis] = size;
      fields.push_back(Type::tensor(s, t.dtype()));
    }
    if (fields.empty()) value_error("sizes is an empty shape value, expected at least one size");
    return Type::tuple(fields);
  }
  std::vector<int64_t> points = get_ints(call.attrs(), "indices");
  const PrimExpr& dim = t.shape()[axis];
  std::optional<int64_t> cdim = as_const_int(dim);
  std::vector<Type> fields;
  int64_t prev = 0;
  for (size_t i = 0; i <= points.size(); ++i) {
    std::vector<PrimExpr> s = t.shape();
    if (i < points.size()) {
      if (points[i] < prev || (cdim && points[i] > *cdim))
        value_error("split points ", to_string(AttrValue::ints(points)), " are not ascending within [0, ",
                    ir::to_string(dim), "]");
      s[axis] = ir::int_imm(points[i] - prev);
      prev = points[i];
    } else {
      s[axis] = arith::simplify(dim - static_cast<int>(prev));
    }
    fields.push_back(Type::tensor(s, t.dtype()));
  }
  return Type::tuple(fields);
}

Type strided_slice_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  SliceSpec spec = strided_slice_spec(call, t.shape());
  std::vector<PrimExpr> out = t.shape();
  for (size_t i = 0; i < spec.axes.size(); ++i) out[spec.axes[i]] = spec.ranges[i].extent;
  return Type::tensor(out, t.dtype());
}

Type take_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  const Type& idx = tensor_arg(call, 1);
  if (!idx.dtype().is_int() && !idx.dtype().is_uint())
    type_error("indices have dtype ", idx.dtype(), ", expected an integer type");
  int axis = normalize_axis(get_int(call.attrs(), "axis", 0), t.ndim());
  std::vector<PrimExpr> out(t.shape().begin(), t.shape().begin() + axis);
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), t.shape().begin() + axis + 1, t.shape().end());
  return Type::tensor(out, t.dtype());
}

Type tile_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  std::vector<PrimExpr> out;
  if (call.args().size() == 2) {  // repeats known at run time: a Shape of Vars
    const std::vector<PrimExpr>& reps = shape_arg(call, 1);
    if (static_cast<int>(reps.size()) != t.ndim()) value_error("reps has ", reps.size(), " entries, expected ", t.ndim());
    for (int i = 0; i < t.ndim(); ++i) out.push_back(arith::simplify(t.shape()[i] * reps[i]));
    return Type::tensor(out, t.dtype());
  }
  std::vector<int64_t> reps = get_ints(call.attrs(), "reps");
  if (static_cast<int>(reps.size()) != t.ndim()) value_error("reps has ", reps.size(), " entries, expected ", t.ndim());
  for (int i = 0; i < t.ndim(); ++i) {
    if (reps[i] < 0) value_error("reps[", i, "] = ", reps[i], ", expected >= 0");
    out.push_back(arith::simplify(t.shape()[i] * static_cast<int>(reps[i])));
  }
  return Type::tensor(out, t.dtype());
}

Type pad_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  int n = t.ndim();
  std::string mode = get_string(call.attrs(), "mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    value_error("mode '", mode, "', expected constant, reflect, edge or wrap");
  std::vector<PrimExpr> out;
  size_t num_tensors = call.args().size();
  if (call.args().back().type().is_shape()) {  // amounts known at run time: a Shape of 2 * rank Vars
    const std::vector<PrimExpr>& pads = shape_arg(call, call.args().size() - 1);
    if (static_cast<int>(pads.size()) != 2 * n) value_error("pads has ", pads.size(), " values, expected 2 * rank = ", 2 * n);
    for (int i = 0; i < n; ++i) out.push_back(arith::simplify(t.shape()[i] + pads[i] + pads[i + n]));
    --num_tensors;
  } else {
    std::vector<int64_t> pads = get_ints(call.attrs(), "pads");
    if (static_cast<int>(pads.size()) != 2 * n) value_error("pads has ", pads.size(), " entries, expected 2 * rank = ", 2 * n);
    for (int i = 0; i < n; ++i) {
      PrimExpr d = arith::simplify(t.shape()[i] + static_cast<int>(pads[i] + pads[i + n]));
      std::optional<int64_t> c = as_const_int(d);
      if (c && *c < 0) value_error("pads remove more than axis ", i, " holds (", ir::to_string(t.shape()[i]), ")");
      if (mode != "constant" && (pads[i] < 0 || pads[i + n] < 0)) value_error("negative pads need mode 'constant'");
      out.push_back(d);
    }
  }
  if (num_tensors > 1) {
    // The fill as a run-time value (ONNX Pad's constant_value input): one element of data's dtype.
    if (mode != "constant") value_error("a pad value argument needs mode 'constant', got '", mode, "'");
    const Type& v = tensor_arg(call, 1);
    if (v.dtype() != t.dtype()) value_error("pad value has dtype ", v.dtype(), ", expected data's ", t.dtype());
    for (const PrimExpr& d : v.shape())
      if (as_const_int(d) != std::optional<int64_t>(1)) value_error("pad value has shape ", dims_str(v.shape()), ", expected one element");
  }
  return Type::tensor(out, t.dtype());
}

Type copy_type(const CallNode& call) { return tensor_arg(call, 0, false); }

Type full_type(const CallNode& call) {
  get_float(call.attrs(), "value");
  return Type::tensor(shape_arg(call, 0), get_dtype(call.attrs(), "dtype"));
}

// arange(; start, limit, delta, dtype), or arange(length: ShapeExpr[1]; start, delta, dtype) when
// the length is symbolic (ONNX Range(0, n, 1) with n a dim).
Type arange_type(const CallNode& call) {
  DataType dt = get_dtype(call.attrs(), "dtype");
  if (call.args().size() == 3) {  // start and delta known at run time, the length a run-time Var
    const std::vector<PrimExpr>& len = shape_arg(call, 0);
    if (len.size() != 1) value_error("length has ", len.size(), " values, expected 1");
    for (size_t i = 1; i < 3; ++i) {
      const Type& v = tensor_arg(call, i);
      if (v.ndim() != 0 || v.dtype() != dt) value_error("argument ", i, " must be a 0-d ", dt, " tensor, not ", to_string(v));
    }
    return Type::tensor(len, dt);
  }
  double start = get_float(call.attrs(), "start"), delta = get_float(call.attrs(), "delta");
  if (delta == 0) value_error("delta is 0");
  if (!call.args().empty()) {
    const std::vector<PrimExpr>& len = shape_arg(call, 0);
    if (len.size() != 1) value_error("length has ", len.size(), " values, expected 1");
    return Type::tensor(len, dt);
  }
  double limit = get_float(call.attrs(), "limit");
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  return Type::tensor(std::vector<int64_t>{n}, dt);
}

Type gather_elements_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  const Type& idx = tensor_arg(call, 1);
  if (idx.ndim() != t.ndim()) value_error("indices have rank ", idx.ndim(), ", expected ", t.ndim(), " as data");
  normalize_axis(get_int(call.attrs(), "axis", 0), t.ndim());
  return Type::tensor(idx.shape(), t.dtype());
}

Type trilu_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  if (t.ndim() < 2) value_error("data has rank ", t.ndim(), ", expected at least 2");
  if (call.args().size() == 2 && shape_arg(call, 1).size() != 1) value_error("k must be a shape value of one value");
  return t;
}

Type one_hot_type(const CallNode& call) {
  const Type& idx = tensor_arg(call, 0);
  const Type& values = tensor_arg(call, 1);
  int axis = normalize_axis(get_int(call.attrs(), "axis", -1), idx.ndim() + 1);
  std::vector<PrimExpr> out = idx.shape();
  if (call.args().size() == 3) {  // depth known at run time: a Shape of one Var
    const std::vector<PrimExpr>& depth = shape_arg(call, 2);
    if (depth.size() != 1) value_error("depth must be a shape value of one value");
    out.insert(out.begin() + axis, depth[0]);
    return Type::tensor(out, values.dtype());
  }
  int64_t depth = get_int(call.attrs(), "depth");
  if (depth <= 0) value_error("depth is ", depth, ", expected > 0");
  out.insert(out.begin() + axis, ir::int_imm(depth));
  return Type::tensor(out, values.dtype());
}

Type depth_to_space_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  if (t.ndim() != 4) value_error("data has rank ", t.ndim(), ", expected 4 (NCHW)");
  int b = static_cast<int>(get_int(call.attrs(), "blocksize"));
  std::optional<int64_t> c = as_const_int(t.shape()[1]);
  if (b <= 0 || (c && *c % (b * b) != 0)) value_error("channels ", ir::to_string(t.shape()[1]), " are not a multiple of blocksize^2 = ", b * b);
  std::string mode = get_string(call.attrs(), "mode", "DCR");
  if (mode != "DCR" && mode != "CRD") value_error("mode '", mode, "', expected DCR or CRD");
  return Type::tensor({t.shape()[0], arith::simplify(floordiv(t.shape()[1], b * b)),
                       arith::simplify(t.shape()[2] * b), arith::simplify(t.shape()[3] * b)},
                      t.dtype());
}

Type space_to_depth_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  if (t.ndim() != 4) value_error("data has rank ", t.ndim(), ", expected 4 (NCHW)");
  int b = static_cast<int>(get_int(call.attrs(), "blocksize"));
  if (b <= 0) value_error("blocksize ", b, ", expected > 0");
  for (int i = 2; i < 4; ++i) {
    std::optional<int64_t> c = as_const_int(t.shape()[i]);
    if (c && *c % b != 0) value_error("spatial dim ", *c, " is not a multiple of blocksize ", b);
  }
  return Type::tensor({t.shape()[0], arith::simplify(t.shape()[1] * (b * b)), arith::simplify(floordiv(t.shape()[2], b)),
                       arith::simplify(floordiv(t.shape()[3], b))},
                      t.dtype());
}

}  // namespace

void register_transform_ops() {
  auto reg = [](const char* name, int lo, int hi, OpPattern p, Type (*f)(const CallNode&), const char* summary) {
    register_op({name, lo, hi, p, f, summary});
  };
  constexpr OpPattern kInj = OpPattern::kInjective;
  reg("reshape", 2, 2, kInj, reshape_type, "reshape(data, shape): the elements in row-major order under a new shape");
  reg("transpose", 1, 1, kInj, transpose_type, "transpose(data; axes): permuted axes (empty: reversed)");
  reg("expand_dims", 1, 1, kInj, expand_dims_type, "expand_dims(data; axes): unit axes inserted at output positions");
  reg("squeeze", 1, 1, kInj, squeeze_type, "squeeze(data; axes): unit axes removed (empty: every constant 1)");
  reg("broadcast_to", 2, 2, OpPattern::kBroadcast, broadcast_to_type, "broadcast_to(data, shape): numpy broadcast");
  reg("concat", 1, -1, kInj, concat_type, "concat(tensors...; axis)");
  reg("split", 1, 2, kInj, split_type,
      "split(data[, sizes: Shape]; axis, indices): pieces between split points (or of run-time sizes), a tuple");
  reg("strided_slice", 1, 2, kInj, strided_slice_type,
      "strided_slice(data[, ends]; begin, end, strides, axes, end_from_shape): ONNX Slice");
  reg("take", 2, 2, kInj, take_type, "take(data, indices; axis): ONNX Gather (negative indices wrap)");
  reg("tile", 1, 2, kInj, tile_type, "tile(data[, reps: Shape]; reps)");
  reg("pad", 1, 3, kInj, pad_type,
      "pad(data[, value: one element][, pads: Shape]; pads, mode constant|reflect|edge|wrap, pad_value)");
  reg("copy", 1, 1, OpPattern::kElemwise, copy_type, "copy(data)");
  reg("full", 1, 1, kInj, full_type, "full(shape; value, dtype): ONNX ConstantOfShape");
  reg("arange", 0, 3, kInj, arange_type,
      "arange([length[, start, delta: 0-d tensors]]; start, limit, delta, dtype): ONNX Range");
  reg("gather_elements", 2, 2, kInj, gather_elements_type, "gather_elements(data, indices; axis)");
  reg("trilu", 1, 2, kInj, trilu_type, "trilu(data[, k: Shape]; k, upper): ONNX Trilu");
  reg("one_hot", 2, 3, kInj, one_hot_type, "one_hot(indices, values[off, on][, depth: Shape]; depth, axis)");
  reg("depth_to_space", 1, 1, kInj, depth_to_space_type, "depth_to_space(data; blocksize, mode DCR|CRD)");
  reg("space_to_depth", 1, 1, kInj, space_to_depth_type, "space_to_depth(data; blocksize)");
  register_resize_ops();
  register_gather_scatter_ops();
}

}  // namespace anvil::graph::ops
