// Converters of GatherElements, GatherND, ScatterElements/Scatter, ScatterND, Trilu, OneHot, DepthToSpace, SpaceToDepth, Resize (opset 10:
// scales input, asymmetric; 11+: roi/scales/sizes inputs and the coordinate modes) and
// Upsample (asymmetric); antialias 1 as resize2d_antialias; and the helpers
// the transform family's converter files share (convert_transform_util.h).
#include <cmath>
#include <cstring>

#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/type.h"
#include "anvil/ir/minifloat.h"
#include "anvil/ir/structural_equal.h"

#include "anvil/frontend/onnx/convert_data_dependent.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/frontend/onnx/import_state.h"

namespace anvil::frontend::onnx {

Tensor int_tensor(const std::vector<int64_t>& shape, const std::vector<int64_t>& values, DataType dtype) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), dtype);
  for (size_t i = 0; i < values.size(); ++i) {
    if (dtype == DataType::int64()) static_cast<int64_t*>(t.data())[i] = values[i];
    else if (dtype == DataType::int32()) static_cast<int32_t*>(t.data())[i] = static_cast<int32_t>(values[i]);
    else if (dtype == DataType::int8()) static_cast<int8_t*>(t.data())[i] = static_cast<int8_t>(values[i]);
    else if (dtype == DataType::uint8()) static_cast<uint8_t*>(t.data())[i] = static_cast<uint8_t>(values[i]);
    else value_error("int_tensor: dtype ", dtype, ", expected int64, int32, int8 or uint8");
  }
  return t;
}

Tensor float_tensor(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  for (size_t i = 0; i < values.size(); ++i) static_cast<float*>(t.data())[i] = static_cast<float>(values[i]);
  return t;
}

double tensor_element(const Tensor& t, int64_t i) {
  const void* p = t.data();
  DataType d = t.dtype();
  if (d == DataType::float32()) return static_cast<const float*>(p)[i];
  if (d == DataType::float64()) return static_cast<const double*>(p)[i];
  if (d == DataType::int64()) return static_cast<double>(static_cast<const int64_t*>(p)[i]);
  if (d == DataType::int32()) return static_cast<const int32_t*>(p)[i];
  if (d == DataType::int16()) return static_cast<const int16_t*>(p)[i];
  if (d == DataType::int8()) return static_cast<const int8_t*>(p)[i];
  if (d == DataType::uint8()) return static_cast<const uint8_t*>(p)[i];
  if (d == DataType::uint16()) return static_cast<const uint16_t*>(p)[i];
  if (d == DataType::uint32()) return static_cast<const uint32_t*>(p)[i];
  if (d == DataType::float16()) {
    // IEEE half: sign, 5 exponent bits (bias 15), 10 mantissa bits.
    uint16_t h = static_cast<const uint16_t*>(p)[i];
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? std::ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : std::ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
  }
  if (d == DataType::boolean()) return static_cast<const uint8_t*>(p)[i] != 0;
  if (d.is_sub_byte_int()) {  // one per byte, in the low bits (runtime/data_type.h)
    int v = static_cast<const uint8_t*>(p)[i] & ((1 << d.bits()) - 1);
    return d.is_int() && v >= 1 << (d.bits() - 1) ? v - (1 << d.bits()) : v;
  }
  if (std::optional<ir::MinifloatFormat> f = ir::minifloat_format(d))
    return f->decode(d.bits() == 16 ? static_cast<const uint16_t*>(p)[i] : static_cast<const uint8_t*>(p)[i]);
  not_implemented_error("reading an element of a ", d, " tensor at import");
}

std::vector<int64_t> tensor_ints(const Tensor& t) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DataType::int64()) out.push_back(static_cast<const int64_t*>(t.data())[i]);
    else out.push_back(static_cast<int64_t>(tensor_element(t, i)));
  }
  return out;
}

Expr known_result(ImportContext& ctx, int out, const Values& values, const std::vector<int64_t>& shape, DataType dtype) {
  ctx.set_known_values(out, values);
  std::vector<int64_t> ints;
  for (const PrimExpr& v : values) {
    std::optional<int64_t> c = ir::as_const_int(v);
    if (!c) return Expr();
    ints.push_back(*c);
  }
  return ctx.constant(int_tensor(shape, ints, dtype));
}

std::optional<Values> known_1d(ImportContext& ctx, int i) {
  std::optional<Values> v = ctx.known_values(i);
  if (!v) return std::nullopt;
  if (std::optional<Tensor> c = ctx.constant_input(i); c && c->shape().size() != 1) return std::nullopt;
  return v;
}

DataType known_dtype(ImportContext& ctx, int i) {
  std::optional<Tensor> c = ctx.constant_input(i);
  return c && (c->dtype() == DataType::int32() || c->dtype() == DataType::int64()) ? c->dtype() : DataType::int64();
}

namespace {

std::vector<Expr> convert_gather_elements(ImportContext& ctx) {
  return {ctx.emit("gather_elements", {ctx.input(0), ctx.input(1)}, {{"axis", ctx.attr_int("axis", 0)}})};
}

std::vector<Expr> convert_gather_nd(ImportContext& ctx) {
  return {ctx.emit("gather_nd", {ctx.input(0), ctx.input(1)}, {{"batch_dims", ctx.attr_int("batch_dims", 0)}})};
}

// ScatterElements (and Scatter, its name before opset 11) and ScatterND; reduction from opset 16.
std::vector<Expr> convert_scatter(ImportContext& ctx) {
  std::string red = ctx.attr_string("reduction", "none");
  bool nd = ctx.node().op_type() == "ScatterND";
  Attrs attrs{{"reduction", red}};
  if (!nd) attrs["axis"] = ctx.attr_int("axis", 0);
  return {ctx.emit(nd ? "scatter_nd" : "scatter_elements", {ctx.input(0), ctx.input(1), ctx.input(2)}, attrs)};
}

// NonZero's output shape depends on the values: computed here for an input known at import,
// else the VM's nonzero builtin at run time, which binds the count as a fresh dim.
std::vector<Expr> convert_nonzero(ImportContext& ctx) {
  std::optional<Tensor> t = ctx.constant_input(0);
  if (!t) return {nonzero_at_run_time(ctx)};
  const std::vector<int64_t>& shape = t->shape();
  int64_t rank = static_cast<int64_t>(shape.size());
  std::vector<std::vector<int64_t>> coords(static_cast<size_t>(std::max<int64_t>(rank, 1)));
  for (int64_t lin = 0; lin < t->numel(); ++lin) {
    if (tensor_element(*t, lin) == 0) continue;
    int64_t rest = lin;
    for (int64_t d = rank - 1; d >= 0; --d) coords[d].push_back(rest % shape[d]), rest /= shape[d];
    if (rank == 0) coords[0].push_back(0);
  }
  int64_t nnz = static_cast<int64_t>(coords[0].size());
  std::vector<int64_t> flat;
  for (int64_t d = 0; d < std::max<int64_t>(rank, 1); ++d) flat.insert(flat.end(), coords[d].begin(), coords[d].end());
  return {ctx.constant(int_tensor({std::max<int64_t>(rank, 1), nnz}, flat))};
}

std::vector<Expr> convert_trilu(ImportContext& ctx) {
  int64_t k = 0;
  if (ctx.has_input(1)) {
    std::optional<Tensor> t = ctx.constant_input(1);
    if (!t)  // k known only at run time: a kernel scalar
      return {ctx.emit("trilu", {ctx.input(0), values_at_run_time(ctx, 1, "k")}, {{"upper", ctx.attr_int("upper", 1)}})};
    k = static_cast<int64_t>(tensor_element(*t, 0));
  }
  return {ctx.emit("trilu", {ctx.input(0)}, {{"k", k}, {"upper", ctx.attr_int("upper", 1)}})};
}

std::vector<Expr> convert_one_hot(ImportContext& ctx) {
  std::optional<Tensor> depth = ctx.constant_input(1);
  if (!depth)  // depth known only at run time: the output's fresh dim
    return {ctx.emit("one_hot", {ctx.input(0), ctx.input(2), values_at_run_time(ctx, 1, "depth")},
                     {{"axis", ctx.attr_int("axis", -1)}})};
  int64_t d = static_cast<int64_t>(tensor_element(*depth, 0));
  return {ctx.emit("one_hot", {ctx.input(0), ctx.input(2)}, {{"depth", d}, {"axis", ctx.attr_int("axis", -1)}})};
}

std::vector<Expr> convert_depth_to_space(ImportContext& ctx) {
  return {ctx.emit("depth_to_space", {ctx.input(0)},
                   {{"blocksize", ctx.attr_int("blocksize")}, {"mode", ctx.attr_string("mode", "DCR")}})};
}

std::vector<Expr> convert_space_to_depth(ImportContext& ctx) {
  return {ctx.emit("space_to_depth", {ctx.input(0)}, {{"blocksize", ctx.attr_int("blocksize")}})};
}

// A float64 constant of `values` (shape [n]).
Expr f64_constant(ImportContext& ctx, const std::vector<double>& values) {
  Tensor t = Tensor::empty({static_cast<int64_t>(values.size())}, DataType::float64());
  for (size_t i = 0; i < values.size(); ++i) static_cast<double*>(t.data())[i] = values[i];
  return ctx.constant(t);
}

// Resize's scales or sizes known only at run time (input `input`, one value per axis of `axes`,
// the input's H and W static; N and C may be symbolic). The output dims are computed in the graph from the value, in
// float64 as the static path computes them, and become fresh Vars (tensor_to_shape); a check
// rejects a non-positive scale or size and any change of N or C; for scales, and for sizes
// under keep_aspect_ratio_policy, the float32 scale the coordinate mapping uses is passed to
// the kernel as a small tensor (*scale_arg) read at *scale_index (h, w; -1: out / in).
// *shape: the Shape [out_h, out_w] of fresh Vars (returned) the resize takes as its size;
// *hw_scale: the float64 scale along H and W (given, policy's, or out / in) for antialias's taps.
Values resize_at_run_time(ImportContext& ctx, const std::vector<int64_t>& axes, const std::vector<PrimExpr>& dims,
                          int input, bool is_scales, const std::string& policy, bool legacy_nearest, Expr* scale_arg,
                          std::vector<int64_t>* scale_index, Expr* shape, Expr* hw_scale) {
  const char* what = is_scales ? "scales" : "sizes";
  auto in_dim = [&](const PrimExpr& d) {
    std::optional<int64_t> c = ir::as_const_int(d);
    if (!c) ctx.unsupported(str_cat("Resize with ", what, " not known at import and a symbolic H or W (run-time ", what,
                                    " need them static)"));
    return static_cast<double>(*c);
  };
  Expr v = ctx.input(input);
  const graph::Type& t = v.type();
  if (!t.is_tensor() || !t.has_rank() || t.ndim() != 1)
    ctx.bad_model(str_cat(what, " must be a 1-d tensor, not ", graph::to_string(t)));
  std::optional<int64_t> len = ir::as_const_int(t.dim(0));
  if (!len) ctx.unsupported(str_cat("Resize with ", what, " not known at import, of a length known only at run time"));
  const size_t k = axes.size();
  if (*len != static_cast<int64_t>(k)) ctx.bad_model(str_cat(what, " has ", *len, " values for ", k, " axes"));
  if (is_scales != t.dtype().is_float())
    ctx.bad_model(str_cat(what, " must be a ", is_scales ? "float" : "int64", " tensor, not ", graph::to_string(t)));
  std::vector<double> in(k), nc(k);  // the input's dims along axes; 1 where the axis is N or C
  for (size_t i = 0; i < k; ++i) {
    std::optional<int64_t> d = ir::as_const_int(dims[static_cast<size_t>(axes[i])]);
    // A symbolic N or C (a dynamic batch): its scale must still be 1; its size is taken to be
    // the input's (unchecked, as on the static path). H and W: in_dim below.
    in[i] = d ? static_cast<double>(*d) : axes[i] < 2 ? 1.0 : in_dim(dims[static_cast<size_t>(axes[i])]);
    nc[i] = axes[i] < 2 && (d || is_scales) ? 1.0 : 0.0;
  }
  int64_t pos[2] = {-1, -1};  // where H and W are in axes
  for (size_t i = 0; i < k; ++i)
    if (axes[i] >= 2) pos[axes[i] - 2] = static_cast<int64_t>(i);
  // The check: every value > 0; N's and C's scale 1 (their size the input's).
  Expr x = ctx.emit("cast", {v}, {{"dtype", DataType::float64()}});
  Expr zero = f64_constant(ctx, {0.0});
  Expr keep = ctx.emit("multiply", {f64_constant(ctx, nc), ctx.emit("subtract", {x, f64_constant(ctx, is_scales ? std::vector<double>(k, 1.0) : in)})});
  Expr ok = ctx.emit("logical_and", {ctx.emit("greater", {x, zero}), ctx.emit("equal", {keep, zero})});
  std::string message = str_cat("Resize '", ctx.node().output(0), "': ", what, " must be positive, and ",
                                is_scales ? "1 for N and C" : "N's and C's sizes the input's", " (N, C not resized)");
  if (legacy_nearest && is_scales && pos[0] >= 0 && pos[1] >= 0) {
    // Before opset 11 nearest rounds down when upsampling, up when downsampling: not both at once.
    Expr hw = ctx.emit("take", {x, ctx.constant(int_tensor({2}, {pos[0], pos[1]}, DataType::int64()))}, {{"axis", int64_t{0}}});
    Expr down = ctx.emit("cast", {ctx.emit("less", {hw, f64_constant(ctx, {1.0})})}, {{"dtype", DataType::uint8()}});
    Expr same = ctx.emit("equal", {ctx.emit("min", {down}, {{"keepdims", int64_t{0}}}), ctx.emit("max", {down}, {{"keepdims", int64_t{0}}})});
    ok = ctx.emit("logical_and", {ok, same});
    message += "; and opset < 11 nearest cannot scale H up and W down (or the reverse)";
  }
  x = ctx.emit("check", {x, ok}, {{"message", message}});
  // The output size along each axis of `axes` (along its H and W only under a keep_aspect_ratio_policy).
  Expr sizes;
  std::vector<int64_t> col(k);  // axes[i]'s entry in sizes
  for (size_t i = 0; i < k; ++i) col[i] = static_cast<int64_t>(i);
  // Along H and W: entry `hw` of values concatenated with `rest` (for an axis axes does not name).
  auto pick_hw = [&](const Expr& values, std::vector<double> rest, const std::vector<int64_t>& hw) {
    Expr all = ctx.emit("concat", {values, f64_constant(ctx, rest)}, {{"axis", int64_t{0}}});
    return ctx.emit("take", {all, ctx.constant(int_tensor({2}, hw, DataType::int64()))}, {{"axis", int64_t{0}}});
  };
  const std::vector<int64_t> hw_in_axes = {pos[0] >= 0 ? pos[0] : static_cast<int64_t>(k),
                                           pos[1] >= 0 ? pos[1] : static_cast<int64_t>(k) + 1};
  if (is_scales) {
    sizes = ctx.emit("floor", {ctx.emit("multiply", {x, f64_constant(ctx, in)})});
    *scale_arg = ctx.emit("cast", {x}, {{"dtype", DataType::float32()}});
    *scale_index = {pos[0], pos[1]};
    *hw_scale = pick_hw(x, {1.0, 1.0}, hw_in_axes);
  } else if (policy == "stretch") {
    sizes = x;
  } else {
    // One scale for the spatial axes listed: the smallest (not_larger) or largest (not_smaller) ratio.
    std::vector<int64_t> spatial;
    std::vector<double> spatial_in;
    for (size_t i = 0; i < k; ++i)
      if (axes[i] >= 2) {
        col[i] = static_cast<int64_t>(spatial.size());
        spatial.push_back(static_cast<int64_t>(i));
        spatial_in.push_back(in[i]);
      }
    if (spatial.size() != k)
      ctx.unsupported("Resize with sizes not known at import and a keep_aspect_ratio_policy whose axes name N or C "
                      "(they would be scaled)");
    Expr idx = ctx.constant(int_tensor({static_cast<int64_t>(spatial.size())}, spatial, DataType::int64()));
    Expr ratio = ctx.emit("divide", {ctx.emit("take", {x, idx}, {{"axis", int64_t{0}}}), f64_constant(ctx, spatial_in)});
    Expr s = ctx.emit(policy == "not_larger" ? "min" : "max", {ratio}, {{"axes", AttrValue::ints({0})}, {"keepdims", int64_t{1}}});
    // std::round as the static path (s * in > 0): floor(. + 0.5).
    sizes = ctx.emit("floor", {ctx.emit("add", {ctx.emit("multiply", {s, f64_constant(ctx, spatial_in)}), f64_constant(ctx, {0.5})})});
    *scale_arg = ctx.emit("cast", {s}, {{"dtype", DataType::float32()}});
    *scale_index = {pos[0] >= 0 ? 0 : -1, pos[1] >= 0 ? 0 : -1};
    *hw_scale = pick_hw(s, {1.0}, {pos[0] >= 0 ? 0 : 1, pos[1] >= 0 ? 0 : 1});
  }
  // [out_h, out_w]: the entries for H and W, the input's dim for one that axes does not name.
  const int64_t m = *ir::as_const_int(sizes.type().dim(0));
  const double in_h = in_dim(dims[2]), in_w = in_dim(dims[3]);
  sizes = pick_hw(sizes, {in_h, in_w},
                  {pos[0] >= 0 ? col[static_cast<size_t>(pos[0])] : m, pos[1] >= 0 ? col[static_cast<size_t>(pos[1])] : m + 1});
  if (!is_scales && policy == "stretch") *hw_scale = ctx.emit("divide", {sizes, f64_constant(ctx, {in_h, in_w})});
  sizes = ctx.emit("cast", {sizes}, {{"dtype", DataType::int64()}});
  std::vector<PrimExpr> vars;
  for (const char* d : {"_out_h", "_out_w"})
    vars.push_back(PrimExpr(ir::Var(str_cat(sanitize_name(ctx.node().output(0)), d), DataType::int32())));
  *shape = ctx.builder().emit(graph::Call::make(graph::kTensorToShape, {sizes}, {}, graph::Type::shape(vars)),
                              str_cat(sanitize_name(ctx.node().output(0)), "_size"));
  return vars;
}

// Resize/Upsample -> resize2d. scales (floats, one per axis) or sizes (known values); N and C
// must keep their size. Before opset 11 (and for Upsample) coordinates are asymmetric and
// nearest rounds down when upsampling, up when downsampling, as ONNX Runtime does.
std::vector<Expr> convert_resize(ImportContext& ctx) {
  bool upsample = ctx.node().op_type() == "Upsample";
  bool old = upsample || ctx.opset() < 11;
  Expr x = ctx.input(0);
  if (!x.type().has_rank() || x.type().ndim() != 4) ctx.unsupported("Resize of a tensor that is not 4-d (NCHW)");
  const std::vector<PrimExpr>& dims = x.type().shape();
  // Opset 18's axes: scales/sizes/roi name only these axes; the others keep scale 1.
  std::vector<int64_t> axes = ctx.attr_ints("axes", std::vector<int64_t>{0, 1, 2, 3});
  for (int64_t& a : axes) a = a < 0 ? a + 4 : a;
  auto spread = [&](const std::vector<double>& v, double fill, const std::string& what) {
    if (v.size() != axes.size()) ctx.bad_model(str_cat(what, " has ", v.size(), " values for ", axes.size(), " axes"));
    std::vector<double> full(4, fill);
    for (size_t i = 0; i < axes.size(); ++i) full[static_cast<size_t>(axes[i])] = v[i];
    return full;
  };
  std::vector<double> scales;
  int run_time = -1;  // the input of scales or sizes known only at run time
  if (upsample && ctx.opset() < 9) {
    scales = ctx.attr_floats("scales");
  } else {
    int si = old ? 1 : 2;
    // A run-time input of static length 0 is an absent one (sizes given instead).
    auto empty = [&](int i) {
      const graph::Type& t = ctx.input(i).type();
      return t.is_tensor() && t.has_rank() && t.ndim() == 1 && ir::as_const_int(t.dim(0)) == std::optional<int64_t>(0);
    };
    if (ctx.has_input(si) && !empty(si)) {
      std::optional<Tensor> t = ctx.constant_input(si);
      if (!t) run_time = si;
      if (t) for (int64_t i = 0; i < t->numel(); ++i) scales.push_back(tensor_element(*t, i));
      if (!scales.empty() && !old) scales = spread(scales, 1.0, "scales");
    }
  }
  Values out;
  double sh = 0, sw = 0;
  std::string mode = ctx.attr_string("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample opset 7
  std::string policy = ctx.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    ctx.bad_model(str_cat("keep_aspect_ratio_policy '", policy, "'"));
  if (run_time < 0 && scales.empty() && !old && ctx.has_input(3) && !ctx.known_values(3)) run_time = 3;
  // The run-time case's scale tensor (or none), [out_h, out_w] Shape, and antialias's tap counts.
  Expr scale_arg, size_arg, taps_arg;
  std::vector<int64_t> scale_index;
  if (run_time >= 0) {
    Expr hw_scale;
    out = resize_at_run_time(ctx, axes, dims, run_time, run_time != 3, run_time == 3 ? policy : "stretch",
                             old && mode == "nearest", &scale_arg, &scale_index, &size_arg, &hw_scale);
    if (!old && ctx.attr_int("antialias", 0) != 0 && mode != "nearest") {
      // resize2d_antialias's taps per axis, as its static filter: -2 floor(-support / min(s, 1)).
      Expr s = ctx.emit("minimum", {hw_scale, f64_constant(ctx, {1.0})});
      Expr support = f64_constant(ctx, {mode == "cubic" ? -2.0 : -1.0});
      Expr n = ctx.emit("multiply", {ctx.emit("floor", {ctx.emit("divide", {support, s})}), f64_constant(ctx, {-2.0})});
      n = ctx.emit("cast", {n}, {{"dtype", DataType::int64()}});
      std::vector<PrimExpr> vars;
      for (const char* d : {"_taps_h", "_taps_w"})
        vars.push_back(PrimExpr(ir::Var(str_cat(sanitize_name(ctx.node().output(0)), d), DataType::int32())));
      taps_arg = ctx.builder().emit(graph::Call::make(graph::kTensorToShape, {n}, {}, graph::Type::shape(vars)),
                                    str_cat(sanitize_name(ctx.node().output(0)), "_taps"));
    }
  } else if (!scales.empty()) {
    if (scales.size() != 4) ctx.bad_model(str_cat("scales has ", scales.size(), " values, expected 4"));
    if (scales[0] != 1 || scales[1] != 1) ctx.unsupported("Resize that scales N or C");
    sh = scales[2], sw = scales[3];
    for (int k = 2; k < 4; ++k) {
      double s = scales[k];
      if (auto c = ir::as_const_int(dims[k])) out.push_back(ir::int_imm(static_cast<int64_t>(std::floor(*c * s))));
      else if (s == std::floor(s)) out.push_back(dims[k] * static_cast<int>(s));
      else ctx.unsupported("Resize of a symbolic dim by a fractional scale");
    }
  } else {
    if (old || !ctx.has_input(3)) ctx.bad_model("Resize without scales or sizes");
    std::optional<Values> sizes = ctx.known_values(3);
    if (!sizes) ctx.unsupported("Resize with sizes not known at import");
    Values full = dims;
    if (sizes->size() != axes.size()) ctx.bad_model(str_cat("sizes has ", sizes->size(), " values for ", axes.size(), " axes"));
    for (size_t i = 0; i < axes.size(); ++i) full[static_cast<size_t>(axes[i])] = (*sizes)[i];
    for (int k = 0; k < 2; ++k) {
      // A symbolic N or C is taken to equal its size (the model resizes only H and W).
      auto want = ir::as_const_int(full[k]), have = ir::as_const_int(dims[k]);
      if (want && have && *want != *have) ctx.unsupported("Resize that changes N or C");
      if (!want && !ir::structural_equal(full[k], dims[k])) ctx.unsupported("Resize with a symbolic size for N or C");
    }
    out = {full[2], full[3]};
    if (policy != "stretch") {
      // One scale for the listed spatial axes: the smallest (not_larger) or largest (not_smaller) ratio.
      double scale = policy == "not_larger" ? 1e300 : 0;
      std::vector<int> spatial;
      for (int64_t a : axes)
        if (a >= 2) spatial.push_back(static_cast<int>(a));
      for (int a : spatial) {
        auto want = ir::as_const_int(full[a]), have = ir::as_const_int(dims[a]);
        if (!want || !have) ctx.unsupported("keep_aspect_ratio_policy with symbolic sizes");
        double r = double(*want) / double(*have);
        scale = policy == "not_larger" ? std::min(scale, r) : std::max(scale, r);
      }
      for (int a : spatial) {
        out[a - 2] = ir::int_imm(static_cast<int64_t>(std::round(scale * double(*ir::as_const_int(dims[a])))));
        (a == 2 ? sh : sw) = scale;
      }
    }
  }
  Attrs attrs{{"mode", mode}, {"scale_h", sh}, {"scale_w", sw}};
  std::string op = "resize2d";
  Expr roi_arg;  // tf_crop_and_resize's roi when it is not a constant
  if (old) {
    attrs["coordinate_transformation_mode"] = "asymmetric";
    if (run_time >= 0) attrs["nearest_mode"] = "legacy";  // floor up, ceil down, by the run-time scales
    bool down = (sh > 0 && sh < 1) || (sw > 0 && sw < 1);
    if (down && mode == "nearest" && !(sh < 1 && sw < 1)) ctx.unsupported("Resize (opset < 11) up one axis and down the other");
    if (run_time < 0) attrs["nearest_mode"] = down ? "ceil" : "floor";
  } else {
    std::string ct = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    attrs["coordinate_transformation_mode"] = ct;
    attrs["nearest_mode"] = ctx.attr_string("nearest_mode", "round_prefer_floor");
    attrs["cubic_coeff_a"] = ctx.attr_float("cubic_coeff_a", -0.75);
    attrs["exclude_outside"] = ctx.attr_int("exclude_outside", 0);
    attrs["extrapolation_value"] = ctx.attr_float("extrapolation_value", 0.0);
    // antialias changes only linear and cubic (nearest ignores it).
    if (ctx.attr_int("antialias", 0) != 0 && mode != "nearest") {
      if (ct == "tf_crop_and_resize") ctx.unsupported("Resize with antialias and tf_crop_and_resize");
      op = "resize2d_antialias";
    }
    if (ct == "tf_crop_and_resize") {
      if (!ctx.has_input(1)) ctx.bad_model("tf_crop_and_resize without a roi");
      const size_t k = axes.size();
      if (std::optional<Tensor> r = ctx.constant_input(1)) {
        std::vector<double> v;
        for (int64_t i = 0; i < r->numel(); ++i) v.push_back(tensor_element(*r, i));
        if (v.size() != 2 * k) ctx.bad_model(str_cat("roi has ", v.size(), " values, expected ", 2 * k));
        std::vector<double> st = spread({v.begin(), v.begin() + k}, 0.0, "roi"), en = spread({v.begin() + k, v.end()}, 1.0, "roi");
        attrs["roi"] = AttrValue::floats({st[2], st[3], en[2], en[3]});
      } else {
        // Read by the kernel at run time: the positions of H's and W's start and end in roi.
        roi_arg = ctx.input(1);
        if (roi_arg.type().ndim() != 1) ctx.bad_model("roi is not 1-d");
        if (auto len = ir::as_const_int(roi_arg.type().dim(0)); len && *len != static_cast<int64_t>(2 * k))
          ctx.bad_model(str_cat("roi has ", *len, " values, expected ", 2 * k));
        std::vector<int64_t> pos(2, -1);
        for (size_t i = 0; i < k; ++i)
          if (axes[i] >= 2) pos[axes[i] - 2] = static_cast<int64_t>(i);
        if (pos[0] < 0 || pos[1] < 0) ctx.unsupported("tf_crop_and_resize with a run-time roi that does not name H and W");
        if (roi_arg.type().dtype() != DataType::float32()) roi_arg = ctx.emit("cast", {roi_arg}, {{"dtype", DataType::float32()}});
        const int64_t n = static_cast<int64_t>(k);
        attrs["roi_index"] = AttrValue::ints({pos[0], pos[1], pos[0] + n, pos[1] + n});
      }
    }
  }
  for (PrimExpr& d : out) d = graph::dim_expr(d);
  std::vector<Expr> args{x, size_arg.defined() ? size_arg : graph::ShapeExpr::make(out)};
  if (roi_arg.defined()) args.push_back(roi_arg);
  if (scale_arg.defined()) {
    args.push_back(scale_arg);
    attrs["scale_index"] = AttrValue::ints(scale_index);
  }
  if (taps_arg.defined()) args.push_back(taps_arg);
  return {ctx.emit(op, args, attrs)};
}

}  // namespace

void register_misc_transform_converters() {
  register_converter("Resize", convert_resize);
  register_converter("Upsample", convert_resize);
  register_converter("GatherElements", convert_gather_elements);
  register_converter("GatherND", convert_gather_nd);
  register_converter("NonZero", convert_nonzero);
  register_converter("ScatterElements", convert_scatter);
  register_converter("Scatter", convert_scatter);
  register_converter("ScatterND", convert_scatter);
  register_converter("Trilu", convert_trilu);
  register_converter("OneHot", convert_one_hot);
  register_converter("DepthToSpace", convert_depth_to_space);
  register_converter("SpaceToDepth", convert_space_to_depth);
}

}  // namespace anvil::frontend::onnx
