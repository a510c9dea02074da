// Converters whose target shape is an input: Reshape (0 = copy the dim unless allowzero, -1 =
// the elements left, both resolved here, symbolically when dims are), Flatten, Expand,
// ConstantOfShape, and Range (constant inputs, a limit that is a dim, or any at run time). A
// Reshape/Expand/ConstantOfShape shape or Range input known only at run time becomes a shape
// value of fresh Vars the VM binds (convert_data_dependent.h).
#include <cmath>

#include "anvil/arith/simplify.h"
#include "anvil/frontend/onnx/convert_data_dependent.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/graph/type.h"
#include "anvil/graph/ops/transform.h"

namespace anvil::frontend::onnx {
namespace {

// The known values of input i as int32 dims (dimension expressions); unsupported when unknown.
Values shape_input(ImportContext& ctx, int i, const std::string& what) {
  std::optional<Values> v = ctx.known_values(i);
  if (!v) ctx.unsupported(str_cat("input ", i, " (", what, ") must be known at import (a constant or a shape computation)"));
  return *v;
}

// prod(num) / prod(den) for Reshape's -1: symbolic factors cancel (N*S*12 / (N*3) -> S*4),
// else floordiv; constants that do not divide are a bad model.
PrimExpr divide_dims(ImportContext& ctx, const Values& num, const Values& den) {
  if (std::optional<PrimExpr> q = graph::ops::exact_quotient(num, den)) return *q;
  graph::ops::DimFactors a = graph::ops::factor_dims(num), b = graph::ops::factor_dims(den);
  if (a.others.empty() && b.others.empty())
    ctx.bad_model(str_cat("cannot reshape ", a.constant, " elements with -1 and ", b.constant, " others"));
  return arith::simplify(floordiv(graph::num_elements(num), graph::num_elements(den)));
}

// Resolves ONNX Reshape's 0 and -1 against the input dims.
Values resolve_reshape(ImportContext& ctx, const Values& in, Values target, bool allowzero) {
  int minus_one = -1;
  for (size_t k = 0; k < target.size(); ++k) {
    std::optional<int64_t> c = ir::as_const_int(target[k]);
    if (c && *c == 0 && !allowzero) {
      if (k >= in.size()) ctx.bad_model(str_cat("shape[", k, "] = 0 copies a dim the rank-", in.size(), " input lacks"));
      target[k] = in[k];
    } else if (c && *c == -1) {
      if (minus_one >= 0) ctx.bad_model("the shape has more than one -1");
      minus_one = static_cast<int>(k);
    } else if (c && *c < -1) {
      ctx.bad_model(str_cat("shape[", k, "] = ", *c, ", expected >= -1"));
    } else {
      target[k] = graph::dim_expr(target[k]);
    }
  }
  if (minus_one >= 0) {
    Values others;
    for (size_t k = 0; k < target.size(); ++k)
      if (static_cast<int>(k) != minus_one) others.push_back(target[k]);
    target[minus_one] = divide_dims(ctx, in, others);
  }
  return target;
}

std::vector<Expr> convert_reshape(ImportContext& ctx) {
  bool allowzero = ctx.attr_int("allowzero", 0) != 0;
  if (!ctx.known_values(1))  // a target known only at run time: resolved by the VM, fresh dims
    return {ctx.emit("reshape", {ctx.input(0), reshape_target_at_run_time(ctx, allowzero)})};
  Values target = shape_input(ctx, 1, "shape");
  auto known = ctx.known_values(0);
  if (known && !ctx.constant_input(0)) {
    // A known-only (1-d) value reshaped, e.g. to [-1] or [1]: stays known when it stays 1-d.
    Values shape = resolve_reshape(ctx, {ir::int_imm(static_cast<int64_t>(known->size()))}, target, allowzero);
    if (shape.size() == 1) return {known_result(ctx, 0, *known, {static_cast<int64_t>(known->size())})};
  }
  Expr x = ctx.input(0);
  Values shape = resolve_reshape(ctx, x.type().shape(), target, allowzero);
  if (known && ctx.constant_input(0) && shape.size() <= 1) {
    std::vector<int64_t> s;
    if (shape.size() == 1) s.push_back(static_cast<int64_t>(known->size()));
    return {known_result(ctx, 0, *known, s, known_dtype(ctx, 0))};
  }
  return {ctx.emit("reshape", {x, graph::ShapeExpr::make(shape)})};
}

std::vector<Expr> convert_flatten(ImportContext& ctx) {
  Expr x = ctx.input(0);
  const std::vector<PrimExpr>& dims = x.type().shape();
  int n = static_cast<int>(dims.size());
  int64_t axis = ctx.attr_int("axis", 1);
  if (axis < -n || axis > n) ctx.bad_model(str_cat("axis ", axis, " is out of range for rank ", n));
  if (axis < 0) axis += n;
  Values outer(dims.begin(), dims.begin() + axis), inner(dims.begin() + axis, dims.end());
  return {ctx.emit("reshape", {x, graph::ShapeExpr::make({graph::num_elements(outer), graph::num_elements(inner)})})};
}

std::vector<Expr> convert_expand(ImportContext& ctx) {
  if (!ctx.known_values(1)) return {ctx.emit("broadcast_to", {ctx.input(0), values_at_run_time(ctx, 1, "shape")})};
  Values shape = shape_input(ctx, 1, "shape");
  for (PrimExpr& d : shape) d = graph::dim_expr(d);
  return {ctx.emit("broadcast_to", {ctx.input(0), graph::ShapeExpr::make(shape)})};
}

std::vector<Expr> convert_constant_of_shape(ImportContext& ctx) {
  Tensor value = ctx.has_attr("value") ? ctx.attr_tensor("value") : float_tensor({1}, {0.0});
  if (value.numel() != 1) ctx.bad_model(str_cat("value has ", value.numel(), " elements, expected 1"));
  double v = tensor_element(value, 0);
  if (!ctx.known_values(0))
    return {ctx.emit("full", {values_at_run_time(ctx, 0, "shape")}, {{"value", v}, {"dtype", value.dtype()}})};
  Values shape = shape_input(ctx, 0, "shape");
  std::vector<int64_t> static_shape;
  bool is_static = true;
  for (const PrimExpr& d : shape) {
    auto c = ir::as_const_int(d);
    if (!c) is_static = false;
    else static_shape.push_back(*c);
  }
  int64_t numel = 1;
  for (int64_t d : static_shape) numel *= d;
  // Small integer fills (shape computations) fold to constants, so their values stay known.
  if (is_static && numel <= kMaxKnown && (value.dtype().is_int() || value.dtype().is_uint())) {
    return {ctx.constant(int_tensor(static_shape, std::vector<int64_t>(numel, static_cast<int64_t>(v)), value.dtype()))};
  }
  for (PrimExpr& d : shape) d = graph::dim_expr(d);
  return {ctx.emit("full", {graph::ShapeExpr::make(shape)}, {{"value", v}, {"dtype", value.dtype()}})};
}

// Range with constant inputs (small integer ones fold to constants), or with a symbolic limit
// and constant start/delta (position ids: Range(0, seq_len, 1)).
std::vector<Expr> convert_range(ImportContext& ctx) {
  std::optional<Tensor> s = ctx.constant_input(0), l = ctx.constant_input(1), d = ctx.constant_input(2);
  std::optional<Values> known_limit = ctx.known_values(1);
  if (s && d && !l && known_limit && known_limit->size() == 1 && tensor_element(*s, 0) == std::floor(tensor_element(*s, 0)) &&
      tensor_element(*d, 0) == std::floor(tensor_element(*d, 0))) {
    // An integer start and delta, the limit a dim: the length symbolic in it.
    double start = tensor_element(*s, 0), delta = tensor_element(*d, 0);
    if (delta == 0) ctx.bad_model("delta is 0");
    int b = static_cast<int>(start), st = static_cast<int>(delta);
    PrimExpr lim = (*known_limit)[0];
    PrimExpr len = st > 0 ? floordiv(lim - b + (st - 1), st) : floordiv(b - lim + (-st - 1), -st);
    return {ctx.emit("arange", {graph::ShapeExpr::make({arith::simplify(len)})},
                     {{"start", start}, {"delta", delta}, {"dtype", s->dtype()}})};
  }
  if (!s || !l || !d) return {range_at_run_time(ctx)};  // the length computed by the VM
  double start = tensor_element(*s, 0), limit = tensor_element(*l, 0), delta = tensor_element(*d, 0);
  if (delta == 0) ctx.bad_model("delta is 0");
  DataType dt = s->dtype();
  int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((limit - start) / delta)));
  if ((dt.is_int() || dt.is_uint()) && n <= kMaxKnown) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<int64_t>(start) + i * static_cast<int64_t>(delta));
    return {ctx.constant(int_tensor({n}, v, dt))};
  }
  return {ctx.emit("arange", {}, {{"start", start}, {"limit", limit}, {"delta", delta}, {"dtype", dt}})};
}

}  // namespace

void register_reshape_converters() {
  register_converter("Reshape", convert_reshape);
  register_converter("Flatten", convert_flatten);
  register_converter("Expand", convert_expand);
  register_converter("ConstantOfShape", convert_constant_of_shape);
  register_converter("Range", convert_range);
}

}  // namespace anvil::frontend::onnx
