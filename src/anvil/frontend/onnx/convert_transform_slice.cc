// Converters of ops that take parts of a tensor or rearrange it: Slice (attributes before
// opset 10, inputs after; negative steps), Split (split attribute before 13, input after,
// num_outputs in 18; equal parts without either), Transpose, Tile, Pad (attributes before 11,
// inputs after, axes in 18; constant mode also by amounts known only as dims; amounts or axes
// known only at run time, and Split's sizes, become Vars: convert_data_dependent.h). Slice and
// Split of known 1-d values stay known.
#include "anvil/frontend/onnx/convert_data_dependent.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/graph/ops/transform.h"
#include "anvil/graph/type.h"

namespace anvil::frontend::onnx {
namespace {

std::vector<Expr> convert_slice(ImportContext& ctx) {
  std::vector<int64_t> starts, ends, axes, steps, end_from_shape;
  Values symbolic_ends;
  if (ctx.opset() < 10) {
    starts = ctx.attr_ints("starts"), ends = ctx.attr_ints("ends");
    axes = ctx.attr_ints("axes", std::vector<int64_t>{});
  } else {
    // Starts/ends/steps known only at run time: the VM slices and binds the extents.
    if (std::optional<Expr> y = slice_at_run_time(ctx)) return {*y};
    starts = ctx.const_ints(1, "starts");
    // Ends may be symbolic (x[:, :seq_len] from a Shape chain): those go in a ShapeExpr.
    std::optional<Values> e = ctx.known_values(2);
    if (!e) ends = ctx.const_ints(2, "ends");  // throws the usual "must be known" error
    for (size_t k = 0; e && k < e->size(); ++k) {
      if (std::optional<int64_t> c = ir::as_const_int((*e)[k])) {
        ends.push_back(*c);
      } else {
        ends.push_back(0);
        end_from_shape.push_back(static_cast<int64_t>(k));
        symbolic_ends.push_back(graph::dim_expr((*e)[k]));
      }
    }
    if (ctx.has_input(3)) axes = ctx.const_ints(3, "axes");
    if (ctx.has_input(4)) steps = ctx.const_ints(4, "steps");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    ctx.bad_model(str_cat("starts, ends, axes and steps have ", starts.size(), ", ", ends.size(), ", ", axes.size(), " and ",
                          steps.size(), " entries, expected the same number"));
  auto known = known_1d(ctx, 0);
  if (known && starts.size() == 1 && (axes[0] == 0 || axes[0] == -1) && end_from_shape.empty()) {
    int64_t n = static_cast<int64_t>(known->size());
    graph::ops::SliceRange r = graph::ops::normalize_slice(ir::int_imm(n), starts[0], ends[0], steps[0]);
    int64_t b = *ir::as_const_int(r.begin), len = *ir::as_const_int(r.extent);
    Values out;
    for (int64_t i = 0; i < len; ++i) out.push_back((*known)[b + i * steps[0]]);
    return {known_result(ctx, 0, out, {len}, known_dtype(ctx, 0))};
  }
  Attrs attrs{{"begin", AttrValue::ints(starts)}, {"end", AttrValue::ints(ends)}, {"strides", AttrValue::ints(steps)},
              {"axes", AttrValue::ints(axes)}};
  std::vector<Expr> args{ctx.input(0)};
  if (!end_from_shape.empty()) {
    attrs["end_from_shape"] = AttrValue::ints(end_from_shape);
    args.push_back(graph::ShapeExpr::make(symbolic_ends));
  }
  return {ctx.emit("strided_slice", args, attrs)};
}

std::vector<Expr> convert_split(ImportContext& ctx) {
  int64_t axis = ctx.attr_int("axis", 0);
  std::vector<int64_t> sizes;
  if (ctx.opset() < 13 && ctx.has_attr("split")) sizes = ctx.attr_ints("split");
  else if (ctx.opset() >= 13 && ctx.has_input(1)) {
    // Sizes known only at run time: pieces sized by their Vars (unless x's values are known).
    if (!ctx.known_values(1) && !known_1d(ctx, 0)) return split_at_run_time(ctx, ctx.input(0), axis);
    sizes = ctx.const_ints(1, "split");
  }
  auto known = known_1d(ctx, 0);
  Expr x = known && (axis == 0 || axis == -1) ? Expr() : ctx.input(0);
  PrimExpr dim = x.defined() ? x.type().dim(static_cast<int>(axis)) : ir::int_imm(static_cast<int64_t>(known->size()));
  int parts = ctx.has_attr("num_outputs") ? static_cast<int>(ctx.attr_int("num_outputs")) : ctx.num_outputs();
  if (sizes.empty()) {
    auto d = ir::as_const_int(dim);
    if (!d) {
      if (parts != 1) ctx.unsupported("Split into equal parts of a symbolic dim");
    } else {
      int64_t chunk = ctx.has_attr("num_outputs") ? (*d + parts - 1) / parts : *d / parts;
      if (!ctx.has_attr("num_outputs") && *d % parts != 0)
        ctx.bad_model(str_cat("dim ", *d, " does not split into ", parts, " equal parts"));
      for (int i = 0; i < parts; ++i) sizes.push_back(std::min(chunk, *d - chunk * i));
    }
  }
  std::vector<int64_t> points;
  int64_t acc = 0;
  for (size_t i = 0; i + 1 < sizes.size(); ++i) points.push_back(acc += sizes[i]);
  if (!x.defined()) {
    std::vector<Expr> outs;
    int64_t start = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      Values v(known->begin() + start, known->begin() + start + sizes[i]);
      outs.push_back(known_result(ctx, static_cast<int>(i), v, {sizes[i]}, known_dtype(ctx, 0)));
      start += sizes[i];
    }
    return outs;
  }
  if (sizes.size() <= 1) return {x};
  Expr t = ctx.emit("split", {x}, {{"axis", axis}, {"indices", AttrValue::ints(points)}});
  std::vector<Expr> outs;
  for (size_t i = 0; i < sizes.size(); ++i) outs.push_back(ctx.builder().emit(graph::TupleGetItem::make(t, static_cast<int>(i))));
  return outs;
}

std::vector<Expr> convert_transpose(ImportContext& ctx) {
  Attrs attrs;
  if (ctx.has_attr("perm")) attrs["axes"] = AttrValue::ints(ctx.attr_ints("perm"));
  return {ctx.emit("transpose", {ctx.input(0)}, attrs)};
}

std::vector<Expr> convert_tile(ImportContext& ctx) {
  if (!ctx.known_values(1)) return {ctx.emit("tile", {ctx.input(0), values_at_run_time(ctx, 1, "repeats")})};
  return {ctx.emit("tile", {ctx.input(0)}, {{"reps", AttrValue::ints(ctx.const_ints(1, "repeats"))}})};
}

// Pad in constant mode by amounts known only as dims (the Attention function's mask padded to
// the total length: pads = [0, total - mask_len]): blocks of the value concatenated on each side.
std::optional<Expr> pad_symbolic(ImportContext& ctx, const Expr& x, const std::string& mode) {
  std::optional<Values> pads = ctx.known_values(1);
  if (!pads || ctx.constant_input(1)) return std::nullopt;
  const int n = x.type().ndim();
  std::vector<int64_t> axes;
  if (ctx.has_input(3)) axes = ctx.const_ints(3, "axes");
  else
    for (int a = 0; a < n; ++a) axes.push_back(a);
  if (pads->size() != 2 * axes.size()) ctx.bad_model(str_cat("pads has ", pads->size(), " entries for ", axes.size(), " axes"));
  if (mode != "constant") ctx.unsupported(str_cat("Pad mode '", mode, "' by amounts known only as dims"));
  Expr value;
  if (ctx.has_input(2)) value = ctx.input(2);
  if (!value.defined() || value.type().dtype() != x.type().dtype()) {
    if (!value.defined()) value = ctx.constant(float_tensor({}, {0.0}));
    value = ctx.emit("cast", {value}, {{"dtype", x.type().dtype()}});
  }
  Expr out = x;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + n : axes[i];
    if (a < 0 || a >= n) ctx.bad_model(str_cat("axis ", axes[i], " is out of range for rank ", n));
    Expr side[2];  // the blocks before and after x (undefined for a 0 pad)
    for (int k = 0; k < 2; ++k) {
      PrimExpr amount = graph::dim_expr((*pads)[i + k * axes.size()]);
      std::optional<int64_t> c = ir::as_const_int(amount);
      if (c && *c < 0) ctx.unsupported("negative pads (cropping) together with amounts known only as dims");
      if (c && *c == 0) continue;
      Values shape = out.type().shape();
      shape[static_cast<size_t>(a)] = amount;
      side[k] = ctx.emit("broadcast_to", {value, graph::ShapeExpr::make(shape)});
    }
    if (!side[0].defined() && !side[1].defined()) continue;
    std::vector<Expr> args;
    if (side[0].defined()) args.push_back(side[0]);
    args.push_back(out);
    if (side[1].defined()) args.push_back(side[1]);
    out = ctx.emit("concat", args, {{"axis", a}});
  }
  return out;
}

std::vector<Expr> convert_pad(ImportContext& ctx) {
  Expr x = ctx.input(0);
  int n = x.type().ndim();
  std::string mode = ctx.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap") ctx.unsupported(str_cat("Pad mode '", mode, "'"));
  std::vector<int64_t> pads;
  double value = 0;
  Expr fill;
  if (ctx.opset() < 11) {
    pads = ctx.attr_ints(ctx.has_attr("pads") ? "pads" : "paddings");
    value = ctx.attr_float("value", 0.0);
  } else {
    // Amounts or axes known only at run time: a shape value of Vars the kernel's index math reads.
    const bool run_time = !ctx.known_values(1) || (ctx.has_input(3) && !ctx.constant_input(3));
    if (!run_time)
      if (std::optional<Expr> y = pad_symbolic(ctx, x, mode)) return {*y};
    if (!run_time) pads = ctx.const_ints(1, "pads");
    if (ctx.has_input(2)) {
      // A constant value becomes the attribute; any other is the kernel's run-time argument.
      if (std::optional<Tensor> v = ctx.constant_input(2)) {
        if (v->numel() > 0) value = tensor_element(*v, 0);
      } else {
        fill = ctx.input(2);
      }
    }
    if (run_time) {
      std::vector<Expr> args{x};
      if (fill.defined() && mode == "constant") args.push_back(fill);
      args.push_back(pad_amounts_at_run_time(ctx, x, mode));
      return {ctx.emit("pad", args, {{"mode", mode}, {"pad_value", value}})};
    }
    if (ctx.has_input(3)) {
      std::vector<int64_t> axes = ctx.const_ints(3, "axes");
      if (pads.size() != 2 * axes.size()) ctx.bad_model(str_cat("pads has ", pads.size(), " entries for ", axes.size(), " axes"));
      std::vector<int64_t> full(2 * n, 0);
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t a = axes[i] < 0 ? axes[i] + n : axes[i];
        if (a < 0 || a >= n) ctx.bad_model(str_cat("axis ", axes[i], " is out of range for rank ", n));
        full[a] = pads[i], full[a + n] = pads[i + axes.size()];
      }
      pads = full;
    }
  }
  std::vector<Expr> args{x};
  if (fill.defined() && mode == "constant") args.push_back(fill);
  return {ctx.emit("pad", args, {{"pads", AttrValue::ints(pads)}, {"mode", mode}, {"pad_value", value}})};
}

}  // namespace

void register_slice_converters() {
  register_converter("Slice", convert_slice);
  register_converter("Split", convert_split);
  register_converter("Transpose", convert_transpose);
  register_converter("Tile", convert_tile);
  register_converter("Pad", convert_pad);
}

}  // namespace anvil::frontend::onnx
