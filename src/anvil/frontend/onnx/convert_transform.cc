// ONNX converters of the transform family (graph/ops/transform.cc, shape.cc) and the shape
// sub-graph ops. Shape/Gather/Concat/Unsqueeze/Squeeze/Slice/Reshape/Size/ConstantOfShape/
// Identity/Constant propagate known values (import_context.h), so PyTorch's
// Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains reach Reshape as dimension
// expressions (static or symbolic) and become reshape(data, ShapeExpr) with 0 and -1 resolved.
// Values known only as dims are left without an expression where they are 1-d (the importer
// materialises them on use); 0-d ones become constants when constant.
#include "anvil/frontend/onnx/convert_data_dependent.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/frontend/onnx/specialize.h"

namespace anvil::frontend::onnx {
namespace {

std::vector<Expr> convert_constant(ImportContext& ctx) {
  if (ctx.has_attr("value")) return {ctx.constant(ctx.attr_tensor("value"))};
  if (ctx.has_attr("value_int")) return {ctx.constant(int_tensor({}, {ctx.attr_int("value_int")}))};
  if (ctx.has_attr("value_ints")) {
    std::vector<int64_t> v = ctx.attr_ints("value_ints");
    return {ctx.constant(int_tensor({static_cast<int64_t>(v.size())}, v))};
  }
  if (ctx.has_attr("value_float")) return {ctx.constant(float_tensor({}, {ctx.attr_float("value_float")}))};
  if (ctx.has_attr("value_floats")) {
    std::vector<double> v = ctx.attr_floats("value_floats");
    return {ctx.constant(float_tensor({static_cast<int64_t>(v.size())}, v))};
  }
  ctx.unsupported("a Constant without value, value_int(s) or value_float(s) (sparse or string constants)");
}

// Identity keeps known values; a symbolic known-only value stays lazy (no shape_to_tensor emitted).
std::vector<Expr> convert_identity(ImportContext& ctx) {
  auto v = ctx.known_values(0);
  if (v && !ctx.constant_input(0)) {
    ctx.set_known_values(0, *v);
    return {Expr()};
  }
  return {ctx.input(0)};
}

std::vector<Expr> convert_shape(ImportContext& ctx) {
  std::vector<PrimExpr> dims;
  if (auto v = ctx.known_values(0); v && !ctx.constant_input(0)) {
    dims = {ir::int_imm(static_cast<int64_t>(v->size()))};  // a known-only value is 1-d
  } else {
    const graph::Type& t = ctx.input(0).type();
    if (!t.is_tensor() || !t.has_rank()) ctx.unsupported("Shape of a value of unknown rank");
    dims = t.shape();
  }
  int64_t n = static_cast<int64_t>(dims.size());
  int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", n);
  start = std::clamp<int64_t>(start < 0 ? start + n : start, 0, n);
  end = std::clamp<int64_t>(end < 0 ? end + n : end, 0, n);
  Values out(dims.begin() + start, dims.begin() + std::max(start, end));
  return {known_result(ctx, 0, out, {static_cast<int64_t>(out.size())})};
}

std::vector<Expr> convert_size(ImportContext& ctx) {
  if (auto v = ctx.known_values(0); v && !ctx.constant_input(0))  // a known-only (1-d) value
    return {known_result(ctx, 0, {ir::int_imm(static_cast<int64_t>(v->size()))}, {})};
  const graph::Type& t = ctx.input(0).type();
  if (!t.has_rank()) ctx.unsupported("Size of a value of unknown rank");
  return {known_result(ctx, 0, {graph::num_elements(t.shape())}, {})};
}

std::vector<Expr> convert_gather(ImportContext& ctx) {
  int64_t axis = ctx.attr_int("axis", 0);
  auto data = known_1d(ctx, 0);
  auto idx = ctx.constant_input(1);
  if (data && idx && axis == 0 && idx->numel() <= kMaxKnown) {
    Values out;
    int64_t n = static_cast<int64_t>(data->size());
    for (int64_t k : tensor_ints(*idx)) {
      if (k < -n || k >= n) ctx.bad_model(str_cat("index ", k, " is out of range for ", n, " known values"));
      out.push_back((*data)[k < 0 ? k + n : k]);
    }
    return {known_result(ctx, 0, out, idx->shape(), known_dtype(ctx, 0))};
  }
  return {ctx.emit("take", {ctx.input(0), ctx.input(1)}, {{"axis", axis}})};
}

std::vector<Expr> convert_concat(ImportContext& ctx) {
  int64_t axis = ctx.attr_int("axis");
  Values known;
  bool all_known = true;
  for (int i = 0; i < ctx.num_inputs() && all_known; ++i) {
    auto v = ctx.has_input(i) ? ctx.known_values(i) : std::nullopt;
    if (!v) all_known = false;
    else known.insert(known.end(), v->begin(), v->end());
  }
  if (all_known && (axis == 0 || axis == -1)) return {known_result(ctx, 0, known, {static_cast<int64_t>(known.size())})};
  std::vector<Expr> args;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) args.push_back(ctx.input(i));
  if (args.size() == 1) return {args[0]};
  return {ctx.emit("concat", args, {{"axis", axis}})};
}

// Axes of Unsqueeze/Squeeze: the attribute before opset 13, input 1 after.
std::optional<std::vector<int64_t>> axes_of(ImportContext& ctx) {
  if (ctx.opset() < 13 || ctx.has_attr("axes")) {
    if (!ctx.has_attr("axes")) return std::nullopt;
    return ctx.attr_ints("axes");
  }
  if (!ctx.has_input(1)) return std::nullopt;
  return ctx.const_ints(1, "axes");
}

// Unsqueeze/Squeeze of a single known value (Gather(Shape(x), 0) -> Unsqueeze -> Concat): the
// value stays known. A symbolic known value without a constant is taken as the 0-d scalar such
// chains carry (its expression is left to the importer, so asking for it would emit a
// shape_to_tensor nobody uses).
// Axes as input 1 (opset 13 on) known only at run time: the node is imported once per set of
// axes they may hold (specialize.h).
bool runtime_axes(ImportContext& ctx) {
  return ctx.opset() >= 13 && !ctx.has_attr("axes") && ctx.has_input(1) && !has_known_ints(ctx, 1);
}

const graph::Type& ranked_data(ImportContext& ctx) {
  const graph::Type& x = ctx.input(0).type();
  if (!x.is_tensor() || !x.has_rank()) ctx.unsupported("axes known only at run time need data of known rank");
  return x;
}

std::vector<Expr> convert_unsqueeze(ImportContext& ctx) {
  if (runtime_axes(ctx)) {
    // Axes index the output, of rank r + k.
    const graph::Type& a = ctx.input(1).type();
    std::optional<std::vector<int64_t>> shape = a.is_tensor() && a.has_rank() ? a.static_shape() : std::nullopt;
    if (!shape || shape->size() > 1) ctx.unsupported("axes known only at run time must be a 1-d tensor of static length");
    int64_t k = shape->empty() ? 1 : (*shape)[0];
    return specialize_on_axes(ctx, 1, ranked_data(ctx).ndim() + k, nullptr, convert_unsqueeze);
  }
  std::optional<std::vector<int64_t>> axes = axes_of(ctx);
  if (!axes) ctx.bad_model("Unsqueeze without axes");
  auto v = ctx.known_values(0);
  if (v && v->size() == 1 && axes->size() == 1) {
    std::optional<Tensor> c = ctx.constant_input(0);
    if (!c || c->shape().empty()) return {known_result(ctx, 0, *v, {1}, c ? c->dtype() : DataType::int64())};
  }
  return {ctx.emit("expand_dims", {ctx.input(0)}, {{"axes", AttrValue::ints(*axes)}})};
}

std::vector<Expr> convert_squeeze(ImportContext& ctx) {
  if (runtime_axes(ctx)) {
    // Only axes whose dim may be 1 (1, or symbolic) can be squeezed.
    graph::Type x = ranked_data(ctx);
    auto may_be_one = [x](const std::vector<int64_t>& axes) {
      for (int64_t a : axes) {
        std::optional<int64_t> d = ir::as_const_int(x.shape()[static_cast<size_t>(a)]);
        if (d && *d != 1) return false;
      }
      return true;
    };
    return specialize_on_axes(ctx, 1, x.ndim(), may_be_one, convert_squeeze);
  }
  std::optional<std::vector<int64_t>> axes = axes_of(ctx);
  auto v = ctx.known_values(0);
  if (v && v->size() == 1) {
    std::optional<Tensor> c = ctx.constant_input(0);
    if (!c || c->shape().size() == 1) return {known_result(ctx, 0, *v, {}, c ? c->dtype() : DataType::int64())};
  }
  Attrs attrs;
  if (axes) attrs["axes"] = AttrValue::ints(*axes);
  return {ctx.emit("squeeze", {ctx.input(0)}, attrs)};
}

}  // namespace

void register_transform_converters() {
  register_converter("Constant", convert_constant);
  register_converter("Identity", convert_identity);
  register_converter("Shape", convert_shape);
  register_converter("Size", convert_size);
  register_converter("Gather", convert_gather);
  register_converter("Concat", convert_concat);
  register_converter("Unsqueeze", convert_unsqueeze);
  register_converter("Squeeze", convert_squeeze);
  register_reshape_converters();
  register_slice_converters();
  register_misc_transform_converters();
  register_einsum_converter();
  register_data_dependent_converters();
}

}  // namespace anvil::frontend::onnx
