// ONNX converters of the nn family (graph/ops/nn.cc): Conv, ConvTranspose (1-d through a
// reshape to 2-d, 3-d as nn.conv3d_transpose; auto_pad and output_shape from static spatial dims), Gemm (alpha, beta, transA, transB, C
// broadcast; a constant B is given to matmul as [K, N], transposed at import for transB), MatMul
// (a constant 2-d B: A's leading dims flattened so the kernel is the 2-d GEMM), BatchNormalization (inference; training_mode 1: batch statistics and running outputs),
// Instance/Layer/Group/RMS normalisation (LayerNormalization's Mean and InvStdDev outputs, its
// stash_type), LRN, MaxPool/AveragePool (1-d through 3-d: 1-d lifted to 2-d, 3-d as two separable
// 2-d pools; ceil_mode, count_include_pad, dilations; MaxPool's Indices for 1-d and 2-d), GlobalAverage/MaxPool (any spatial rank, as 4-d), Softmax/LogSoftmax (opset < 13:
// flattened to 2-d at `axis`, as those opsets define it).
#include <algorithm>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Attrs;
using graph::Expr;
using graph::Type;
using ir::PrimExpr;

const Type& input_type(ImportContext& ctx, int i) {
  const Type& t = ctx.input(i).type();
  if (!t.is_tensor() || !t.has_rank()) ctx.unsupported("input " + std::to_string(i) + " must be a tensor of known rank");
  return t;
}

Expr reshape(ImportContext& ctx, const Expr& x, std::vector<PrimExpr> shape) {
  return ctx.emit("reshape", {x, graph::ShapeExpr::make(std::move(shape))});
}

// A 0-d tensor of dtype holding v (float types only).
Expr scalar(ImportContext& ctx, DataType dtype, double v) {
  Tensor t = Tensor::empty({}, dtype);
  if (dtype == DataType::float32()) *static_cast<float*>(t.data()) = static_cast<float>(v);
  else if (dtype == DataType::float64()) *static_cast<double*>(t.data()) = v;
  else ctx.unsupported(str_cat("a scale factor on dtype ", dtype));
  return ctx.constant(t);
}

// [K, N] -> [N, K] of a constant matrix (any element size).
Tensor transposed(const Tensor& t) {
  const int64_t r = t.shape()[0], c = t.shape()[1];
  Tensor out = Tensor::empty({c, r}, t.dtype());
  const size_t es = t.dtype().bytes();
  const char* src = static_cast<const char*>(t.data());
  char* dst = static_cast<char*>(out.data());
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) std::memcpy(dst + (j * r + i) * es, src + (i * c + j) * es, es);
  return out;
}

// --- convolution and pooling windows ---------------------------------------------------------

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // 2-d: pads top, left, bottom, right
  bool one_d = false;
};

// Kernel/strides/dilations/pads of a window of `max_sd` spatial dims at most, per axis (pads:
// the begins, then the ends), auto_pad resolved against the static spatial dims.
Window window_nd(ImportContext& ctx, const Type& x, std::vector<int64_t> kernel, int max_sd) {
  const int sd = x.ndim() - 2;
  if (sd < 1 || sd > max_sd)
    ctx.unsupported(str_cat(sd, "-d spatial data (only 1-d ", max_sd == 3 ? "to 3-d" : "and 2-d", ")"));
  if (static_cast<int>(kernel.size()) != sd) ctx.bad_model("kernel_shape has " + std::to_string(kernel.size()) + " values");
  std::vector<int64_t> strides = ctx.attr_ints("strides", std::vector<int64_t>(sd, 1));
  std::vector<int64_t> dil = ctx.attr_ints("dilations", std::vector<int64_t>(sd, 1));
  std::vector<int64_t> pads = ctx.attr_ints("pads", std::vector<int64_t>(2 * sd, 0));
  if (static_cast<int>(strides.size()) != sd || static_cast<int>(dil.size()) != sd ||
      static_cast<int>(pads.size()) != 2 * sd)
    ctx.bad_model("strides/dilations/pads do not match the " + std::to_string(sd) + "-d kernel");
  std::string auto_pad = ctx.attr_string("auto_pad", std::string("NOTSET"));
  if (auto_pad == "VALID") {
    pads.assign(2 * sd, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < sd; ++i) {
      std::optional<int64_t> in = ir::as_const_int(x.dim(2 + i));
      if (!in) ctx.unsupported("auto_pad " + auto_pad + " on a symbolic spatial dim");
      int64_t out = (*in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + (kernel[i] - 1) * dil[i] + 1 - *in);
      int64_t small = total / 2, big = total - small;
      pads[i] = auto_pad == "SAME_UPPER" ? small : big;
      pads[i + sd] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad != "NOTSET") {
    ctx.bad_model("auto_pad '" + auto_pad + "'");
  }
  Window w;
  w.kernel = kernel, w.strides = strides, w.dilations = dil, w.pads = pads;
  return w;
}

// The window of a 1-d or 2-d convolution or pool: 1-d lifted to height 1 (pads top, left,
// bottom, right).
Window window(ImportContext& ctx, const Type& x, std::vector<int64_t> kernel) {
  Window n = window_nd(ctx, x, std::move(kernel), 2);
  const std::vector<int64_t>&strides = n.strides, &dil = n.dilations, &pads = n.pads;
  Window w;
  if (n.kernel.size() == 1) {
    w.one_d = true;
    w.kernel = {1, n.kernel[0]}, w.strides = {1, strides[0]}, w.dilations = {1, dil[0]}, w.pads = {0, pads[0], 0, pads[1]};
  } else {
    w = n;
  }
  return w;
}

// [N, C, L] -> [N, C, 1, L] for 1-d windows.
Expr lift(ImportContext& ctx, const Expr& x, const Window& w) {
  if (!w.one_d) return x;
  const Type& t = x.type();
  return reshape(ctx, x, {t.dim(0), t.dim(1), ir::int_imm(1), t.dim(2)});
}

Expr lower(ImportContext& ctx, const Expr& y, const Window& w) {
  if (!w.one_d) return y;
  const Type& t = y.type();
  return reshape(ctx, y, {t.dim(0), t.dim(1), t.dim(3)});
}

std::vector<int64_t> weight_kernel(ImportContext& ctx, const Type& w) {
  std::vector<int64_t> k;
  for (int i = 2; i < w.ndim(); ++i) {
    std::optional<int64_t> c = ir::as_const_int(w.dim(i));
    if (!c) ctx.unsupported("a weight with a symbolic kernel size");
    k.push_back(*c);
  }
  if (ctx.has_attr("kernel_shape")) {
    std::vector<int64_t> ks = ctx.attr_ints("kernel_shape");
    if (ks != k) ctx.bad_model("kernel_shape does not match the weight's shape");
  }
  return k;
}

// y + bias[c] along dim 1 of a 4-d (or lifted) result.
Expr add_channel_bias(ImportContext& ctx, const Expr& y, int bias_input) {
  if (!ctx.has_input(bias_input)) return y;
  Expr b = ctx.input(bias_input);
  std::vector<PrimExpr> shape = {b.type().dim(0)};
  for (int i = 2; i < y.type().ndim(); ++i) shape.push_back(ir::int_imm(1));
  return ctx.emit("add", {y, reshape(ctx, b, shape)});
}

std::vector<Expr> convert_conv(ImportContext& ctx) {
  const Type& x = input_type(ctx, 0);
  const Type& wt = input_type(ctx, 1);
  Window win = window(ctx, x, weight_kernel(ctx, wt));
  Expr w = ctx.input(1);
  if (win.one_d) w = reshape(ctx, w, {wt.dim(0), wt.dim(1), ir::int_imm(1), wt.dim(2)});
  Attrs a{{"strides", AttrValue::ints(win.strides)},
          {"padding", AttrValue::ints(win.pads)},
          {"dilation", AttrValue::ints(win.dilations)},
          {"groups", AttrValue(ctx.attr_int("group", 1))}};
  Expr y = ctx.emit("nn.conv2d", {lift(ctx, ctx.input(0), win), w}, a);
  return {lower(ctx, add_channel_bias(ctx, y, 2), win)};
}

// ConvTranspose: the pads attribute, or with output_shape / auto_pad SAME_* the pads that give the
// wanted output size (the ONNX reference's split of the total, floor division); a negative end pad
// (a wanted size past the natural one) becomes output padding. 3-d as nn.conv3d_transpose.
std::vector<Expr> convert_conv_transpose(ImportContext& ctx) {
  const Type& x = input_type(ctx, 0);
  const Type& wt = input_type(ctx, 1);
  std::vector<int64_t> kernel = weight_kernel(ctx, wt);
  const int sd = x.ndim() - 2;
  std::string auto_pad = ctx.attr_string("auto_pad", std::string("NOTSET"));
  std::vector<int64_t> opad = ctx.attr_ints("output_padding", std::vector<int64_t>(std::max(sd, 0), 0));
  std::vector<int64_t> out_shape;
  if (ctx.has_attr("output_shape")) {
    out_shape = ctx.attr_ints("output_shape");
    if (static_cast<int>(out_shape.size()) > sd) out_shape.erase(out_shape.begin(), out_shape.end() - sd);
  }
  // Validates strides/dilations/pads (auto_pad SAME: the conv rule, replaced below).
  Window nd = window_nd(ctx, x, kernel, 3);
  if (static_cast<int>(opad.size()) != sd || (!out_shape.empty() && static_cast<int>(out_shape.size()) != sd))
    ctx.bad_model("output_padding/output_shape do not match the " + std::to_string(sd) + "-d kernel");
  if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (int i = 0; i < sd; ++i) {
      std::optional<int64_t> in = ir::as_const_int(x.dim(2 + i));
      if (!in) ctx.unsupported("ConvTranspose output_shape/auto_pad on a symbolic spatial dim");
      const int64_t s = nd.strides[i], d = nd.dilations[i];
      const int64_t want = out_shape.empty() ? *in * s : out_shape[i];
      const int64_t total = s * (*in - 1) + opad[i] + (kernel[i] - 1) * d + 1 - want;
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      // ONNX: SAME_UPPER puts the smaller half first; otherwise the larger half first.
      nd.pads[i] = auto_pad == "SAME_UPPER" ? half : total - half;
      nd.pads[i + sd] = auto_pad == "SAME_UPPER" ? total - half : half;
    }
  }
  for (int i = 0; i < sd; ++i) {
    if (nd.pads[i + sd] < 0) opad[i] -= nd.pads[i + sd], nd.pads[i + sd] = 0;  // zeros past the natural end
    if (nd.pads[i] < 0) ctx.unsupported("ConvTranspose with a negative begin padding");
  }
  Attrs a{{"groups", AttrValue(ctx.attr_int("group", 1))}};
  Expr w = ctx.input(1);
  if (sd == 3) {
    a["strides"] = AttrValue::ints(nd.strides), a["padding"] = AttrValue::ints(nd.pads);
    a["output_padding"] = AttrValue::ints(opad), a["dilation"] = AttrValue::ints(nd.dilations);
    return {add_channel_bias(ctx, ctx.emit("nn.conv3d_transpose", {ctx.input(0), w}, a), 2)};
  }
  Window win = nd;
  if (sd == 1) {
    win.one_d = true;
    win.kernel = {1, kernel[0]}, win.strides = {1, nd.strides[0]}, win.dilations = {1, nd.dilations[0]};
    win.pads = {0, nd.pads[0], 0, nd.pads[1]};
    opad = {0, opad[0]};
    w = reshape(ctx, w, {wt.dim(0), wt.dim(1), ir::int_imm(1), wt.dim(2)});
  }
  a["strides"] = AttrValue::ints(win.strides), a["padding"] = AttrValue::ints(win.pads);
  a["output_padding"] = AttrValue::ints(opad), a["dilation"] = AttrValue::ints(win.dilations);
  Expr y = ctx.emit("nn.conv2d_transpose", {lift(ctx, ctx.input(0), win), w}, a);
  return {lower(ctx, add_channel_bias(ctx, y, 2), win)};
}

// The attributes of nn.max_pool2d / nn.avg_pool2d over a 2-d window (pads top, left, bottom, right).
Attrs pool2d_attrs(ImportContext& ctx, bool is_max, const Window& w) {
  Attrs a{{"pool_size", AttrValue::ints(w.kernel)},
          {"strides", AttrValue::ints(w.strides)},
          {"padding", AttrValue::ints(w.pads)},
          {"dilation", AttrValue::ints(w.dilations)},
          {"ceil_mode", AttrValue(ctx.attr_int("ceil_mode", 0))}};
  if (!is_max) a["count_include_pad"] = AttrValue(ctx.attr_int("count_include_pad", 0));
  return a;
}

Expr pool2d(ImportContext& ctx, bool is_max, const Expr& x, const Window& w) {
  return ctx.emit(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, pool2d_attrs(ctx, is_max, w));
}

// A 3-d window is a box, so pooling over it separates: first over (H, W) with depth folded into
// the channels, then over D with H and W flattened into one axis of window 1. Max is exact; an
// average too, since the number of taps a box window counts (inside the input or the padded
// input) is the product of the per-axis counts, and the (H, W) count does not depend on depth.
Expr pool3d(ImportContext& ctx, bool is_max, const Expr& x, const Window& w) {
  const Type& t = x.type();
  Window hw{{w.kernel[1], w.kernel[2]}, {w.strides[1], w.strides[2]}, {w.dilations[1], w.dilations[2]},
            {w.pads[1], w.pads[2], w.pads[4], w.pads[5]}};
  Expr y = pool2d(ctx, is_max, reshape(ctx, x, {t.dim(0), t.dim(1) * t.dim(2), t.dim(3), t.dim(4)}), hw);
  const PrimExpr oh = y.type().dim(2), ow = y.type().dim(3);
  Window d{{w.kernel[0], 1}, {w.strides[0], 1}, {w.dilations[0], 1}, {w.pads[0], 0, w.pads[3], 0}};
  y = pool2d(ctx, is_max, reshape(ctx, y, {t.dim(0), t.dim(1), t.dim(2), oh * ow}), d);
  return reshape(ctx, y, {t.dim(0), t.dim(1), y.type().dim(2), oh, ow});
}

std::vector<Expr> convert_pool(ImportContext& ctx, bool is_max) {
  const bool indices = is_max && ctx.num_outputs() > 1 && !ctx.node().output(1).empty();
  const Type& x = input_type(ctx, 0);
  if (x.ndim() == 5) {
    if (indices) ctx.unsupported("MaxPool's Indices output of 3-d data");
    return {pool3d(ctx, is_max, ctx.input(0), window_nd(ctx, x, ctx.attr_ints("kernel_shape"), 3))};
  }
  Window win = window(ctx, x, ctx.attr_ints("kernel_shape"));
  Expr in = lift(ctx, ctx.input(0), win);
  Expr y = pool2d(ctx, is_max, in, win);
  if (!indices) return {lower(ctx, y, win)};
  // Flat indices into the 4-d (lifted) input equal those into a 1-d input: its height is 1.
  Attrs a = pool2d_attrs(ctx, true, win);
  a["storage_order"] = AttrValue(ctx.attr_int("storage_order", 0));
  if (win.one_d && ctx.attr_int("storage_order", 0) != 0) ctx.unsupported("MaxPool's Indices of 1-d data with storage_order 1");
  Expr idx = ctx.emit("nn.max_pool2d_indices", {in, y}, a);
  return {lower(ctx, y, win), lower(ctx, idx, win)};
}

std::vector<Expr> convert_global_pool(ImportContext& ctx, bool is_max) {
  const Type& x = input_type(ctx, 0);
  const char* op = is_max ? "nn.global_max_pool2d" : "nn.global_avg_pool2d";
  if (x.ndim() == 4) return {ctx.emit(op, {ctx.input(0)})};
  if (x.ndim() < 3) ctx.unsupported("global pooling of rank " + std::to_string(x.ndim()) + " (at least 3)");
  // Other ranks as 4-d: the spatial dims but the last merged into one (1 for 1-d).
  PrimExpr rows = ir::int_imm(1);
  std::vector<PrimExpr> ones = {x.dim(0), x.dim(1)};
  for (int d = 2; d < x.ndim(); ++d) {
    if (d < x.ndim() - 1) rows = rows * x.dim(d);
    ones.push_back(ir::int_imm(1));
  }
  Expr y = ctx.emit(op, {reshape(ctx, ctx.input(0), {x.dim(0), x.dim(1), rows, x.dim(x.ndim() - 1)})});
  return {reshape(ctx, y, ones)};
}

// --- GEMM ------------------------------------------------------------------------------------

// a [..., K] times b [K, N]. A constant 2-d b stays [K, N] (the GEMM kernel packs it with
// contiguous reads) and a's leading dims are flattened by reshape so the kernel is the 2-d GEMM
// (matmul_x86; a symbolic batch becomes its symbolic M). Otherwise numpy matmul.
Expr matmul_expr(ImportContext& ctx, const Expr& a, const Expr& b, bool b_constant) {
  const Type& at = a.type();
  const Type& bt = b.type();
  if (b_constant && bt.ndim() == 2 && at.ndim() > 2 && at.dtype().is_float()) {
    std::vector<PrimExpr> lead(at.shape().begin(), at.shape().end() - 1);
    Expr a2 = reshape(ctx, a, {graph::num_elements(lead), at.dim(-1)});
    Expr y = ctx.emit("matmul", {a2, b});
    lead.push_back(bt.dim(1));
    return reshape(ctx, y, lead);
  }
  return ctx.emit("matmul", {a, b});
}

std::vector<Expr> convert_matmul(ImportContext& ctx) {
  input_type(ctx, 0);
  input_type(ctx, 1);
  return {matmul_expr(ctx, ctx.input(0), ctx.input(1), ctx.constant_input(1).has_value())};
}

std::vector<Expr> convert_gemm(ImportContext& ctx) {
  const Type& at = input_type(ctx, 0);
  input_type(ctx, 1);
  const double alpha = ctx.attr_float("alpha", 1.0), beta = ctx.attr_float("beta", 1.0);
  const bool ta = ctx.attr_int("transA", 0) != 0, tb = ctx.attr_int("transB", 0) != 0;
  Expr a = ctx.input(0);
  if (ta) a = ctx.emit("transpose", {a}, {{"axes", AttrValue::ints({1, 0})}});
  Expr y;
  std::optional<Tensor> bc = ctx.constant_input(1);
  if (tb && bc && bc->shape().size() == 2) {
    y = ctx.emit("matmul", {a, ctx.constant(transposed(*bc))});  // [K, N] for the GEMM's packing
  } else if (tb) {
    y = ctx.emit("nn.dense", {a, ctx.input(1)});  // B is [N, K]: dense's weight layout
  } else {
    y = matmul_expr(ctx, a, ctx.input(1), bc.has_value());
  }
  if (alpha != 1.0) y = ctx.emit("multiply", {y, scalar(ctx, at.dtype(), alpha)});
  if (ctx.has_input(2) && beta != 0.0) {
    Expr c = ctx.input(2);
    if (beta != 1.0) c = ctx.emit("multiply", {c, scalar(ctx, at.dtype(), beta)});
    y = ctx.emit("add", {y, c});
  }
  return {y};
}

// --- normalisation ---------------------------------------------------------------------------

// Training mode (opset 14+): normalised with the batch's own mean and (population) variance over
// every axis but 1; the running_mean / running_var outputs blend the inputs' statistics with them,
// input * momentum + batch * (1 - momentum).
std::vector<Expr> convert_batch_norm(ImportContext& ctx) {
  const bool training = ctx.attr_int("training_mode", 0) != 0;
  if (ctx.opset() < 9 && ctx.attr_int("spatial", 1) != 1) ctx.unsupported("spatial 0");
  if (!training)
    for (int i = 1; i < ctx.num_outputs(); ++i)
      if (!ctx.node().output(i).empty()) ctx.unsupported("the training outputs (mean, var) without training_mode 1");
  if (training && ctx.opset() < 14) ctx.unsupported("the training outputs before opset 14");
  std::vector<Expr> args;
  for (int i = 0; i < 5; ++i) args.push_back(ctx.input(i));
  const Attrs bn{{"epsilon", AttrValue(ctx.attr_float("epsilon", 1e-5))}, {"axis", AttrValue(1)}};
  if (!training) return {ctx.emit("nn.batch_norm", args, bn)};
  const Type& xt = input_type(ctx, 0);
  const DataType dt = xt.dtype();
  std::vector<int64_t> axes;
  for (int d = 0; d < xt.ndim(); ++d)
    if (d != 1) axes.push_back(d);
  Expr x = args[0];
  Expr mean = ctx.emit("mean", {x}, {{"axes", AttrValue::ints(axes)}, {"keepdims", AttrValue(1)}});
  Expr dev = ctx.emit("subtract", {x, mean});
  Expr var = ctx.emit("mean", {ctx.emit("multiply", {dev, dev})}, {{"axes", AttrValue::ints(axes)}, {"keepdims", AttrValue(0)}});
  mean = reshape(ctx, mean, {xt.dim(1)});
  Expr y = ctx.emit("nn.batch_norm", {x, args[1], args[2], mean, var}, bn);
  const double momentum = ctx.attr_float("momentum", 0.9);
  auto blend = [&](const Expr& running, const Expr& batch) {
    return ctx.emit("add", {ctx.emit("multiply", {running, scalar(ctx, dt, momentum)}),
                            ctx.emit("multiply", {batch, scalar(ctx, dt, 1 - momentum)})});
  };
  std::vector<Expr> out{y};
  if (ctx.num_outputs() > 1) out.push_back(ctx.node().output(1).empty() ? Expr() : blend(args[3], mean));
  if (ctx.num_outputs() > 2) out.push_back(ctx.node().output(2).empty() ? Expr() : blend(args[4], var));
  return out;
}

std::vector<Expr> convert_instance_norm(ImportContext& ctx) {
  return {ctx.emit("nn.instance_norm", {ctx.input(0), ctx.input(1), ctx.input(2)},
                   {{"epsilon", AttrValue(ctx.attr_float("epsilon", 1e-5))}})};
}

// The statistics are computed in stash_type (float32 by default): an input of another float type
// (float16) is normalised in it and Y cast back. The optional Mean and InvStdDev outputs (of
// stash_type, shaped like X with 1 at the normalised dims) are reductions of their own.
std::vector<Expr> convert_layer_norm(ImportContext& ctx) {
  const Type& xt = input_type(ctx, 0);
  const int axis = graph::ops::normalize_axis(ctx.attr_int("axis", -1), std::max(xt.ndim(), 1));
  const double eps = ctx.attr_float("epsilon", 1e-5);
  const DataType t = xt.dtype();
  DataType stash = anvil_dtype_or_throw(static_cast<int32_t>(ctx.attr_int("stash_type", 1)), "stash_type");
  if (!stash.is_float()) ctx.bad_model(str_cat("stash_type is ", stash, ", expected a float type"));
  if (!t.is_float()) ctx.unsupported(str_cat("LayerNormalization of ", t));
  auto in_stash = [&](Expr e) { return e.type().dtype() == stash ? e : ctx.emit("cast", {e}, {{"dtype", stash}}); };
  Expr x = in_stash(ctx.input(0));
  std::vector<Expr> args = {x, in_stash(ctx.input(1))};
  if (ctx.has_input(2)) args.push_back(in_stash(ctx.input(2)));
  Expr y = ctx.emit("nn.layer_norm", args, {{"axis", AttrValue(axis)}, {"epsilon", AttrValue(eps)}});
  if (stash != t) y = ctx.emit("cast", {y}, {{"dtype", t}});
  const bool want_mean = ctx.num_outputs() > 1 && !ctx.node().output(1).empty();
  const bool want_inv = ctx.num_outputs() > 2 && !ctx.node().output(2).empty();
  if (!want_mean && !want_inv) return {y};
  std::vector<int64_t> axes;
  for (int d = axis; d < xt.ndim(); ++d) axes.push_back(d);
  Attrs reduce{{"axes", AttrValue::ints(axes)}, {"keepdims", AttrValue(1)}};
  Expr mean = ctx.emit("mean", {x}, reduce);
  Expr inv;
  if (want_inv) {
    Expr dev = ctx.emit("subtract", {x, mean});
    Expr var = ctx.emit("mean", {ctx.emit("multiply", {dev, dev})}, reduce);
    inv = ctx.emit("rsqrt", {ctx.emit("add", {var, scalar(ctx, stash, eps)})});
  }
  return {y, want_mean ? mean : Expr(), inv};
}

std::vector<Expr> convert_rms_norm(ImportContext& ctx) {
  return {ctx.emit("nn.rms_norm", {ctx.input(0), ctx.input(1)},
                   {{"axis", AttrValue(ctx.attr_int("axis", -1))}, {"epsilon", AttrValue(ctx.attr_float("epsilon", 1e-5))}})};
}

// Opset 18's scale and bias are per group: repeated per channel (constants only).
Expr per_channel(ImportContext& ctx, int i, int64_t groups, const PrimExpr& channels) {
  Expr v = ctx.input(i);
  std::optional<int64_t> vc = ir::as_const_int(v.type().dim(0)), cc = ir::as_const_int(channels);
  if (vc && cc && *vc == groups && *cc != groups) {
    std::optional<Tensor> t = ctx.constant_input(i);
    if (!t) ctx.unsupported("per-group scale/bias that is not a constant");
    const int64_t per = *cc / groups;
    const size_t es = t->dtype().bytes();
    Tensor out = Tensor::empty({*cc}, t->dtype());
    for (int64_t c = 0; c < *cc; ++c)
      std::memcpy(static_cast<char*>(out.data()) + c * es, static_cast<const char*>(t->data()) + (c / per) * es, es);
    return ctx.constant(out);
  }
  return v;
}

std::vector<Expr> convert_group_norm(ImportContext& ctx) {
  const Type& x = input_type(ctx, 0);
  const int64_t g = ctx.attr_int("num_groups");
  return {ctx.emit("nn.group_norm", {ctx.input(0), per_channel(ctx, 1, g, x.dim(1)), per_channel(ctx, 2, g, x.dim(1))},
                   {{"num_groups", AttrValue(g)}, {"epsilon", AttrValue(ctx.attr_float("epsilon", 1e-5))}})};
}

std::vector<Expr> convert_lrn(ImportContext& ctx) {
  return {ctx.emit("nn.lrn", {ctx.input(0)},
                   {{"size", AttrValue(ctx.attr_int("size"))},
                    {"alpha", AttrValue(ctx.attr_float("alpha", 1e-4))},
                    {"beta", AttrValue(ctx.attr_float("beta", 0.75))},
                    {"bias", AttrValue(ctx.attr_float("bias", 1.0))}})};
}

// Opset >= 13: along axis (default -1). Before: the input flattened to 2-d at axis (default 1).
std::vector<Expr> convert_softmax(ImportContext& ctx, const char* op) {
  const Type& x = input_type(ctx, 0);
  if (ctx.opset() >= 13) return {ctx.emit(op, {ctx.input(0)}, {{"axis", AttrValue(ctx.attr_int("axis", -1))}})};
  const int axis = graph::ops::normalize_axis(ctx.attr_int("axis", 1), std::max(x.ndim(), 1));
  if (axis == x.ndim() - 1) return {ctx.emit(op, {ctx.input(0)}, {{"axis", AttrValue(-1)}})};
  std::vector<PrimExpr> outer(x.shape().begin(), x.shape().begin() + axis), inner(x.shape().begin() + axis, x.shape().end());
  Expr flat = reshape(ctx, ctx.input(0), {graph::num_elements(outer), graph::num_elements(inner)});
  Expr y = ctx.emit(op, {flat}, {{"axis", AttrValue(1)}});
  return {reshape(ctx, y, x.shape())};
}

}  // namespace

void register_nn_converters() {
  register_converter("Conv", convert_conv);
  register_converter("ConvTranspose", convert_conv_transpose);
  register_converter("MaxPool", [](ImportContext& c) { return convert_pool(c, true); });
  register_converter("AveragePool", [](ImportContext& c) { return convert_pool(c, false); });
  register_converter("GlobalMaxPool", [](ImportContext& c) { return convert_global_pool(c, true); });
  register_converter("GlobalAveragePool", [](ImportContext& c) { return convert_global_pool(c, false); });
  register_converter("MatMul", convert_matmul);
  register_converter("Gemm", convert_gemm);
  register_converter("BatchNormalization", convert_batch_norm);
  register_converter("InstanceNormalization", convert_instance_norm);
  register_converter("LayerNormalization", convert_layer_norm);
  register_converter("GroupNormalization", convert_group_norm);
  register_converter("RMSNormalization", convert_rms_norm);
  register_converter("LRN", convert_lrn);
  register_converter("Softmax", [](ImportContext& c) { return convert_softmax(c, "nn.softmax"); });
  register_converter("LogSoftmax", [](ImportContext& c) { return convert_softmax(c, "nn.log_softmax"); });
}

}  // namespace anvil::frontend::onnx
