// NonZero, Slice, Compress and Unique whose output shape depends on values known only at run time (see
// the header).
#include "anvil/frontend/onnx/convert_data_dependent.h"

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/import_state.h"
#include "anvil/graph/type.h"
#include "anvil/ir/printer.h"

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
  return values_of(ctx, int_vector_input(ctx, i, what, &n), what);
}

graph::Expr values_of(ImportContext& ctx, const graph::Expr& t, const std::string& what) {
  int64_t n = *ir::as_const_int(t.type().dim(0));
  std::vector<ir::PrimExpr> vars;
  // Plain int Vars, not size Vars: a run-time value may be negative (Trilu's k).
  for (int64_t k = 0; k < n; ++k)
    vars.push_back(ir::PrimExpr(ir::Var(str_cat(sanitize_name(ctx.node().output(0)), "_", what, n > 1 ? std::to_string(k) : ""),
                                        DataType::int32())));
  return emit_typed(ctx, graph::kTensorToShape, {t}, {}, graph::Type::shape(std::move(vars)));
}

namespace {

// Input i as a 1-d int64 tensor of static length (*length).
graph::Expr int64_vector_input(ImportContext& ctx, int i, const std::string& what, int64_t* length) {
  graph::Expr v = int_vector_input(ctx, i, what, length);
  return v.type().dtype() == DataType::int64() ? v : ctx.emit("cast", {v}, {{"dtype", DataType::int64()}});
}

graph::Expr int64_constant(ImportContext& ctx, const std::vector<int64_t>& shape, const std::vector<int64_t>& values) {
  return ctx.constant(int_tensor(shape, values, DataType::int64()));
}

// dims as a 1-d int64 tensor: a constant when static, else shape_to_tensor of them.
graph::Expr dims_tensor(ImportContext& ctx, const std::vector<ir::PrimExpr>& dims) {
  std::vector<int64_t> values;
  for (const ir::PrimExpr& d : dims)
    if (std::optional<int64_t> c = ir::as_const_int(d)) values.push_back(*c);
  if (values.size() == dims.size()) return int64_constant(ctx, {static_cast<int64_t>(dims.size())}, values);
  return ctx.emit("shape_to_tensor", {graph::ShapeExpr::make(dims)});
}

// v[begin:end] of a 1-d tensor.
graph::Expr slice_1d(ImportContext& ctx, const graph::Expr& v, int64_t begin, int64_t end) {
  return ctx.emit("strided_slice", {v}, {{"begin", graph::AttrValue::ints({begin})}, {"end", graph::AttrValue::ints({end})},
                                         {"strides", graph::AttrValue::ints({1})}, {"axes", graph::AttrValue::ints({0})}});
}

// x, after a run-time check that every element of ok is true (else a ValueError with the node's
// name, `message` and x's values). What uses the result runs only on values that passed.
graph::Expr checked(ImportContext& ctx, const graph::Expr& x, const graph::Expr& ok, const std::string& message) {
  std::string full = str_cat(static_cast<NodeContext&>(ctx).prefix(), ": ", message);
  return ctx.emit("check", {x, ok}, {{"message", full}});
}

graph::Expr all_of(ImportContext& ctx, std::vector<graph::Expr> oks) {
  graph::Expr ok = oks[0];
  for (size_t i = 1; i < oks.size(); ++i) ok = ctx.emit("logical_and", {ok, oks[i]});
  return ok;
}

}  // namespace

std::vector<graph::Expr> split_at_run_time(ImportContext& ctx, const graph::Expr& x, int64_t axis) {
  const graph::Type& t = x.type();
  int a = static_cast<int>(axis < 0 ? axis + t.ndim() : axis);
  if (a < 0 || a >= t.ndim()) ctx.bad_model(str_cat("axis ", axis, " is out of range for rank ", t.ndim()));
  int64_t k = 0;
  graph::Expr sizes = int64_vector_input(ctx, 1, "split", &k);
  if (k != ctx.num_outputs())
    ctx.bad_model(str_cat("input 1 (split) has ", k, " values for ", ctx.num_outputs(), " outputs"));
  // The sizes must be non-negative and fill the axis: the pieces are read at their prefix sums.
  graph::Expr zero = int64_constant(ctx, {}, {0});
  graph::Expr total = ctx.emit("sum", {sizes}, {{"keepdims", int64_t{0}}});
  graph::Expr ok = all_of(ctx, {ctx.emit("greater_equal", {sizes, zero}),
                                ctx.emit("equal", {total, dims_tensor(ctx, {t.dim(a)})})});
  sizes = checked(ctx, sizes, ok, str_cat("split sizes must be non-negative and sum to axis ", a, "'s dim ", ir::to_string(t.dim(a))));
  graph::Expr pieces = ctx.emit("split", {x, values_of(ctx, sizes, "split")}, {{"axis", int64_t{a}}});
  std::vector<graph::Expr> outs;
  for (int64_t i = 0; i < k; ++i)
    outs.push_back(ctx.builder().emit(graph::TupleGetItem::make(pieces, static_cast<int>(i))));
  return outs;
}

graph::Expr pad_amounts_at_run_time(ImportContext& ctx, const graph::Expr& x, const std::string& mode) {
  const int64_t n = x.type().ndim();
  int64_t count = 0, k = n;
  graph::Expr pads = int64_vector_input(ctx, 1, "pads", &count);
  std::vector<graph::Expr> oks;
  if (ctx.has_input(3)) {
    // pads[i] and pads[i + k] go to axis axes[i]: full = sum_i pads[i] * (axes[i] == a), computed
    // in the graph with the one-hot matrix of the (normalised) axes.
    graph::Expr axes = int64_vector_input(ctx, 3, "axes", &k);
    if (count != 2 * k) ctx.bad_model(str_cat("pads has ", count, " entries for ", k, " axes"));
    graph::Expr zero = int64_constant(ctx, {}, {0}), one = int64_constant(ctx, {}, {1});
    graph::Expr wrapped = ctx.emit("where", {ctx.emit("less", {axes, zero}),
                                             ctx.emit("add", {axes, int64_constant(ctx, {}, {n})}), axes});
    std::vector<int64_t> positions;
    for (int64_t a = 0; a < n; ++a) positions.push_back(a);
    graph::Expr hot = ctx.emit("cast", {ctx.emit("equal", {ctx.emit("reshape", {wrapped, graph::ShapeExpr::make({ir::int_imm(k), ir::int_imm(1)})}),
                                                          int64_constant(ctx, {1, n}, positions)})},
                               {{"dtype", DataType::int64()}});  // (k, n)
    // Each axis in range (one hit in its row), no axis twice (at most one in each column).
    oks.push_back(ctx.emit("equal", {ctx.emit("sum", {hot}, {{"axes", graph::AttrValue::ints({1})}, {"keepdims", int64_t{0}}}), one}));
    oks.push_back(ctx.emit("less_equal", {ctx.emit("sum", {hot}, {{"axes", graph::AttrValue::ints({0})}, {"keepdims", int64_t{0}}}), one}));
    auto scatter = [&](int64_t begin) {
      graph::Expr part = ctx.emit("reshape", {slice_1d(ctx, pads, begin, begin + k), graph::ShapeExpr::make({ir::int_imm(k), ir::int_imm(1)})});
      return ctx.emit("sum", {ctx.emit("multiply", {part, hot})}, {{"axes", graph::AttrValue::ints({0})}, {"keepdims", int64_t{0}}});
    };
    pads = ctx.emit("concat", {scatter(0), scatter(k)}, {{"axis", int64_t{0}}});
  } else if (count != 2 * n) {
    ctx.bad_model(str_cat("pads has ", count, " entries, expected 2 * rank = ", 2 * n));
  }
  // Output dims in + begin + end >= 0; the other modes pad by non-negative amounts, an axis they
  // pad must not be empty (edge/wrap read it), and reflect pads by less than the dim (one reflection).
  graph::Expr dims = dims_tensor(ctx, x.type().shape()), zero = int64_constant(ctx, {}, {0});
  graph::Expr begin = slice_1d(ctx, pads, 0, n), end = slice_1d(ctx, pads, n, 2 * n);
  oks.push_back(ctx.emit("greater_equal", {ctx.emit("add", {ctx.emit("add", {dims, begin}), end}), zero}));
  std::string rule = "each axis's dim + begin + end must be >= 0";
  if (mode != "constant") {
    oks.push_back(ctx.emit("greater_equal", {pads, zero}));
    graph::Expr fits = mode == "reflect" ? all_of(ctx, {ctx.emit("less", {begin, dims}), ctx.emit("less", {end, dims})})
                                         : ctx.emit("greater", {dims, zero});
    oks.push_back(ctx.emit("logical_or", {ctx.emit("equal", {ctx.emit("add", {begin, end}), zero}), fits}));
    rule = str_cat("mode '", mode, "' pads by amounts >= 0", mode == "reflect" ? " and less than the axis's dim" : "",
                   ", an empty axis not at all");
  }
  for (graph::Expr& ok : oks)  // one bool vector to check
    if (ok.type().ndim() == 0) ok = ctx.emit("reshape", {ok, graph::ShapeExpr::make({ir::int_imm(1)})});
  graph::Expr ok = oks.size() == 1 ? oks[0] : ctx.emit("concat", oks, {{"axis", int64_t{0}}});
  std::string message = str_cat(ctx.has_input(3) ? "axes must be distinct and within [-rank, rank), " : "", rule,
                                " (the pads per axis, begins then ends, of data ", graph::to_string(x.type()), ", follow)");
  return values_of(ctx, checked(ctx, pads, ok, message), "pads");
}

graph::Expr range_at_run_time(ImportContext& ctx) {
  // start, limit and delta as 0-d tensors of the output's dtype (a one-element 1-d one reshaped).
  auto scalar = [&](int i, const char* what) {
    graph::Expr v = ctx.input(i);
    const graph::Type& t = v.type();
    if (!t.is_tensor() || !t.has_rank() || t.ndim() > 1 || (t.ndim() == 1 && ir::as_const_int(t.dim(0)) != std::optional<int64_t>(1)))
      ctx.bad_model(str_cat("input ", i, " (", what, ") must be a scalar, not ", graph::to_string(t)));
    return t.ndim() == 0 ? v : ctx.emit("reshape", {v, graph::ShapeExpr::make({})});
  };
  graph::Expr start = scalar(0, "start"), limit = scalar(1, "limit"), delta = scalar(2, "delta");
  DataType dt = start.type().dtype();
  if (limit.type().dtype() != dt || delta.type().dtype() != dt)
    ctx.bad_model(str_cat("start, limit and delta have dtypes ", dt, ", ", limit.type().dtype(), " and ", delta.type().dtype(),
                          ", expected one"));
  auto f64 = [&](const graph::Expr& v) { return ctx.emit("cast", {v}, {{"dtype", DataType::float64()}}); };
  // The length on the host (one fresh Var); the kernel reads start and delta.
  graph::Expr length = emit_typed(ctx, graph::kRangeLength, {f64(start), f64(limit), f64(delta)}, {},
                                  graph::Type::shape({fresh_dim(ctx, "_len")}));
  return ctx.emit("arange", {length, start, delta}, {{"dtype", dt}});
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
