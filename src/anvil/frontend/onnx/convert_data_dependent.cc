// NonZero, Slice, Compress and Unique whose output shape depends on values known only at run time (see
// the header).
#include "anvil/frontend/onnx/convert_data_dependent.h"

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/import_state.h"
#include "anvil/graph/type.h"

namespace anvil::frontend::onnx {
namespace {

// A fresh dim named after the node's output (unique in its graph): the VM binds it by name.
ir::PrimExpr fresh_dim(ImportContext& ctx, const std::string& suffix) {
  return ir::PrimExpr(ir::size_var(str_cat(sanitize_name(ctx.node().output(0)), suffix)));
}

graph::Expr emit_typed(ImportContext& ctx, const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs,
                       graph::Type type) {
  return ctx.builder().emit(graph::Call::make(op, std::move(args), std::move(attrs), std::move(type)),
                            sanitize_name(ctx.node().output(0)));
}

// An index input (starts/ends/steps) as a run-time 1-d int tensor of `count` values.
graph::Expr index_input(ImportContext& ctx, int i, const char* what, int64_t* count) {
  graph::Expr v = ctx.input(i);
  const graph::Type& t = v.type();
  if (!t.is_tensor() || !t.has_rank() || t.ndim() != 1 || !(t.dtype() == DataType::int64() || t.dtype() == DataType::int32()))
    ctx.bad_model(str_cat("input ", i, " (", what, ") must be a 1-d int32 or int64 tensor, not ", graph::to_string(t)));
  std::optional<int64_t> n = ir::as_const_int(t.dim(0));
  if (!n) ctx.unsupported(str_cat("input ", i, " (", what, ") of a length known only at run time"));
  if (*count >= 0 && *n != *count)
    ctx.bad_model(str_cat("input ", i, " (", what, ") has ", *n, " values, expected ", *count));
  *count = *n;
  return v;
}

}  // namespace

namespace {

// Input i as a 1-d integer tensor of static length (a 0-d one reshaped, a float one cast).
graph::Expr int_vector_input(ImportContext& ctx, int i, const std::string& what, int64_t* length) {
  graph::Expr v = ctx.input(i);
  const graph::Type& t = v.type();
  if (!t.is_tensor() || !t.has_rank() || t.ndim() > 1)
    ctx.bad_model(str_cat("input ", i, " (", what, ") must be a 0-d or 1-d tensor, not ", graph::to_string(t)));
  std::optional<int64_t> n = t.ndim() == 0 ? std::optional<int64_t>(1) : ir::as_const_int(t.dim(0));
  if (!n) ctx.unsupported(str_cat("input ", i, " (", what, ") of a length known only at run time"));
  if (t.ndim() == 0) v = ctx.emit("reshape", {v, graph::ShapeExpr::make({ir::int_imm(1)})});
  if (t.dtype().is_float()) v = ctx.emit("cast", {v}, {{"dtype", DataType::int64()}});
  else if (!t.dtype().is_int() && !t.dtype().is_uint())
    ctx.bad_model(str_cat("input ", i, " (", what, ") must be of an integer or float dtype, not ", t.dtype()));
  *length = *n;
  return v;
}

}  // namespace

graph::Expr values_at_run_time(ImportContext& ctx, int i, const std::string& what) {
  int64_t n = 0;
  graph::Expr t = int_vector_input(ctx, i, what, &n);
  std::vector<ir::PrimExpr> vars;
  // Plain int Vars, not size Vars: a run-time value may be negative (Trilu's k).
  for (int64_t k = 0; k < n; ++k)
    vars.push_back(ir::PrimExpr(ir::Var(str_cat(sanitize_name(ctx.node().output(0)), "_", what, n > 1 ? std::to_string(k) : ""),
                                        DataType::int32())));
  return emit_typed(ctx, graph::kTensorToShape, {t}, {}, graph::Type::shape(std::move(vars)));
}

graph::Expr reshape_target_at_run_time(ImportContext& ctx, bool allowzero) {
  int64_t n = 0;
  graph::Expr x = ctx.input(0);
  graph::Expr t = int_vector_input(ctx, 1, "shape", &n);
  std::vector<ir::PrimExpr> dims;
  for (int64_t k = 0; k < n; ++k) dims.push_back(fresh_dim(ctx, str_cat("_d", k)));
  return emit_typed(ctx, graph::kReshapeTarget, {x, t}, {{"allowzero", graph::AttrValue(int64_t{allowzero})}},
                    graph::Type::shape(std::move(dims)));
}

graph::Expr nonzero_at_run_time(ImportContext& ctx) {
  graph::Expr x = ctx.input(0);
  const graph::Type& t = x.type();
  if (!t.is_tensor() || !t.has_rank()) ctx.unsupported("NonZero of a tensor of unknown rank");
  int64_t rows = std::max(t.ndim(), 1);
  return emit_typed(ctx, graph::kNonZero, {x}, {},
                    graph::Type::tensor({ir::int_imm(rows), fresh_dim(ctx, "_nnz")}, DataType::int64()));
}

std::optional<graph::Expr> slice_at_run_time(ImportContext& ctx) {
  bool steps_known = !ctx.has_input(4) || ctx.known_values(4);
  bool axes_known = !ctx.has_input(3) || ctx.known_values(3);
  if (ctx.known_values(1) && ctx.known_values(2) && steps_known && axes_known) return std::nullopt;
  graph::Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  if (!xt.is_tensor() || !xt.has_rank()) ctx.unsupported("Slice by run-time starts/ends of a tensor of unknown rank");
  const int rank = xt.ndim();
  int64_t count = -1;
  graph::Expr starts = index_input(ctx, 1, "starts", &count);
  graph::Expr ends = index_input(ctx, 2, "ends", &count);
  std::vector<int64_t> axes;
  graph::Expr axes_tensor;  // run-time axes: any axis may be sliced, so every dim is fresh
  if (ctx.has_input(3) && !ctx.known_values(3)) {
    int64_t n = count;
    axes_tensor = index_input(ctx, 3, "axes", &n);
  } else if (ctx.has_input(3)) {
    axes = ctx.const_ints(3, "axes");
    if (static_cast<int64_t>(axes.size()) != count)
      ctx.bad_model(str_cat("axes has ", axes.size(), " values for ", count, " starts"));
  } else {
    for (int64_t i = 0; i < count; ++i) axes.push_back(i);
  }
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank) ctx.bad_model(str_cat("axis ", a, " is out of range for rank ", rank));
    if (seen[static_cast<size_t>(a)]) ctx.bad_model(str_cat("axis ", a, " is repeated"));
    seen[static_cast<size_t>(a)] = true;
  }
  graph::Expr steps;
  if (ctx.has_input(4)) {
    steps = index_input(ctx, 4, "steps", &count);
  } else {
    Tensor ones = Tensor::empty({count}, DataType::int64());
    for (int64_t i = 0; i < count; ++i) static_cast<int64_t*>(ones.data())[i] = 1;
    steps = ctx.constant(ones);
  }
  std::vector<ir::PrimExpr> dims = xt.shape();
  if (axes_tensor.defined()) {
    for (int a = 0; a < rank; ++a) dims[static_cast<size_t>(a)] = fresh_dim(ctx, str_cat("_d", a));
    return emit_typed(ctx, graph::kDynamicSlice, {x, starts, ends, steps, axes_tensor}, {},
                      graph::Type::tensor(std::move(dims), xt.dtype()));
  }
  for (int64_t a : axes) dims[static_cast<size_t>(a)] = fresh_dim(ctx, str_cat("_d", a));
  return emit_typed(ctx, graph::kDynamicSlice, {x, starts, ends, steps}, {{"axes", graph::AttrValue::ints(axes)}},
                    graph::Type::tensor(std::move(dims), xt.dtype()));
}

namespace {

// Compress(x, condition; axis): x's slices along axis (x flattened without one) where condition
// is true = take(x, the indices nonzero(condition) gives, axis). A condition shorter than the
// axis drops the rest (as numpy.compress); a longer static one is cut to the axis first.
std::vector<graph::Expr> convert_compress(ImportContext& ctx) {
  graph::Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  if (!xt.is_tensor() || !xt.has_rank()) ctx.unsupported("Compress of a tensor of unknown rank");
  int64_t axis = 0;
  if (ctx.has_attr("axis")) {
    axis = ctx.attr_int("axis");
    if (axis < 0) axis += xt.ndim();
    if (axis < 0 || axis >= xt.ndim()) ctx.bad_model(str_cat("axis ", ctx.attr_int("axis"), " is out of range for rank ", xt.ndim()));
  } else {
    x = ctx.emit("reshape", {x, graph::ShapeExpr::make({graph::num_elements(xt.shape())})});
  }
  ir::PrimExpr dim = x.type().dim(static_cast<int>(axis));
  graph::Expr cond = ctx.input(1);
  const graph::Type& ct = cond.type();
  if (!ct.is_tensor() || !ct.has_rank() || ct.ndim() != 1)
    ctx.bad_model(str_cat("input 1 (condition) must be a 1-d tensor, not ", graph::to_string(ct)));
  std::optional<int64_t> len = ir::as_const_int(ct.dim(0)), d = ir::as_const_int(dim);
  if (len && d && *len > *d)
    cond = ctx.emit("strided_slice", {cond}, {{"begin", graph::AttrValue::ints({0})}, {"end", graph::AttrValue::ints({*d})},
                                              {"strides", graph::AttrValue::ints({1})}, {"axes", graph::AttrValue::ints({0})}});
  graph::Expr rows = ctx.builder().emit(
      graph::Call::make(graph::kNonZero, {cond}, {},
                        graph::Type::tensor({ir::int_imm(1), fresh_dim(ctx, "_count")}, DataType::int64())),
      sanitize_name(ctx.node().output(0)) + "_idx");
  graph::Expr idx = ctx.emit("reshape", {rows, graph::ShapeExpr::make({rows.type().dim(1)})});
  return {ctx.emit("take", {x, idx}, {{"axis", axis}})};
}

// Unique(x; sorted, axis): one call of the graph op unique giving all four outputs.
std::vector<graph::Expr> convert_unique(ImportContext& ctx) {
  graph::Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  if (!xt.is_tensor() || !xt.has_rank()) ctx.unsupported("Unique of a tensor of unknown rank");
  int64_t axis = -1;
  std::vector<ir::PrimExpr> y_dims;
  ir::PrimExpr u = fresh_dim(ctx, "_unique"), n;
  if (ctx.has_attr("axis")) {
    axis = ctx.attr_int("axis");
    if (axis < 0) axis += xt.ndim();
    if (axis < 0 || axis >= xt.ndim()) ctx.bad_model(str_cat("axis ", ctx.attr_int("axis"), " is out of range for rank ", xt.ndim()));
    y_dims = xt.shape();
    n = y_dims[static_cast<size_t>(axis)];
    y_dims[static_cast<size_t>(axis)] = u;
  } else {
    y_dims = {u};
    n = graph::num_elements(xt.shape());
  }
  auto vec = [](const ir::PrimExpr& d) { return graph::Type::tensor({d}, DataType::int64()); };
  graph::Type type = graph::Type::tuple({graph::Type::tensor(y_dims, xt.dtype()), vec(u), vec(n), vec(u)});
  graph::Expr call = ctx.builder().emit(
      graph::Call::make(graph::kUnique, {x}, {{"sorted", ctx.attr_int("sorted", 1)}, {"axis", axis}}, type),
      sanitize_name(ctx.node().output(0)) + "_all");
  std::vector<graph::Expr> outs;
  for (int i = 0; i < ctx.num_outputs(); ++i) outs.push_back(ctx.builder().emit(graph::TupleGetItem::make(call, i)));
  return outs;
}

}  // namespace

void register_data_dependent_converters() {
  register_converter("Compress", convert_compress);
  register_converter("Unique", convert_unique);
}

}  // namespace anvil::frontend::onnx
