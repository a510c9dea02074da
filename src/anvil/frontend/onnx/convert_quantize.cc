// ONNX converters of linear quantisation: QuantizeLinear and DequantizeLinear (opsets 10-25),
// composed from elementwise graph ops, so operator fusion makes each one kernel, and
// DynamicQuantizeLinear (its range from a max and a min reduction).
//
//   QuantizeLinear:   y = cast<T>(clip(round_half_even(x / scale) + zero_point, T's range))
//   DequantizeLinear: y = (float(x) - float(zero_point)) * scale, of scale's dtype (or output_dtype)
//
// The scale and zero point are per tensor (0-d or one element), per axis (1-d of x.shape[axis],
// opset 13) or blocked (opset 21: x's rank, x.shape[axis] / block_size along `axis`, each element
// repeated block_size times, the last block possibly shorter). T is the zero point's dtype, else
// output_dtype, else uint8. x / scale is computed in the dtype of `precision` (opset 23) or in
// x's (float64 for an int32 x), as the operator's definition computes it; the rounded value is
// then widened to float32 (or kept in float64), where adding a zero point of 16 bits is exact.
// float8 / float4 outputs: y = cast<T>(x / scale + zero_point) computed in float32, clamped to
// the type's largest finite value first unless `saturate` is 0; int4/uint4/int2/uint2 saturate to
// their ranges as the 8- and 16-bit ones do. Dequantising any of them: a cast to float32 first.
#include <algorithm>
#include <cstdint>
#include <utility>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/minifloat.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Expr;
using ir::PrimExpr;

struct Range {
  double lo, hi;
};

// The integer range a quantised dtype saturates to; nullopt for the others.
std::optional<Range> integer_range(DataType t) {
  if (t == DataType::int8()) return Range{-128, 127};
  if (t == DataType::uint8()) return Range{0, 255};
  if (t == DataType::int16()) return Range{-32768, 32767};
  if (t == DataType::uint16()) return Range{0, 65535};
  if (t == DataType::int32()) return Range{-2147483648.0, 2147483647.0};
  if (t == DataType::int4()) return Range{-8, 7};
  if (t == DataType::uint4()) return Range{0, 15};
  if (t == DataType::int2()) return Range{-2, 1};
  if (t == DataType::uint2()) return Range{0, 3};
  return std::nullopt;
}

// float8 / float4: no rounding step, the cast rounds (to nearest even); with `saturate` (the
// default) a value past the largest finite one clamps to it, as the reference's conversion does.
// Not float8_e8m0fnu (an MX scale, no sign, no zero): (de)quantising to it is not supported yet.
bool minifloat(DataType t) {
  return t.is_low_precision_float() && t != DataType::bfloat16() && t != DataType::float8_e8m0fnu();
}

Expr cast(ImportContext& ctx, const Expr& e, DataType to) {
  if (e.type().dtype() == to) return e;
  return ctx.emit("cast", {e}, {{"dtype", to}});
}

// Input i (the scale or the zero point) in a form that broadcasts against x: a 0-d tensor per
// tensor, [1.., n, ..1] per axis, x's shape when blocked (a take of each block's element).
Expr broadcastable(ImportContext& ctx, int i, const graph::Type& xt, int64_t axis, int64_t block_size) {
  Expr v = ctx.input(i);
  const graph::Type& t = v.type();
  const char* what = i == 1 ? "scale" : "zero point";
  if (!t.is_tensor() || !t.has_rank()) ctx.unsupported(str_cat("the ", what, " must be a tensor of known rank"));
  const std::vector<PrimExpr>& shape = t.shape();
  const int64_t rank = static_cast<int64_t>(xt.shape().size());
  // One element, whatever the rank: per tensor.
  bool single = std::all_of(shape.begin(), shape.end(), [](const PrimExpr& d) { return ir::as_const_int(d) == std::optional<int64_t>(1); });
  if (single) return shape.empty() ? v : ctx.emit("reshape", {v, graph::ShapeExpr::make(std::vector<PrimExpr>{})});
  // Per axis or blocked: the axis must be one of x's (the default 1 is not, for a 1-d x).
  if (axis < 0 || axis >= rank) ctx.bad_model(str_cat("axis ", ctx.attr_int("axis", 1), " is out of range for x of rank ", rank));
  if (block_size <= 0) {
    if (shape.size() != 1) {
      ctx.bad_model(str_cat("the ", what, " has rank ", shape.size(), "; per-axis quantisation takes a 1-d one (",
                            "blocked quantisation: block_size > 0)"));
    }
    std::vector<PrimExpr> dims(static_cast<size_t>(rank), ir::int_imm(1));
    dims[static_cast<size_t>(axis)] = shape[0];
    return ctx.emit("reshape", {v, graph::ShapeExpr::make(std::move(dims))});
  }
  if (static_cast<int64_t>(shape.size()) != rank) {
    ctx.bad_model(str_cat("blocked quantisation: the ", what, " has rank ", shape.size(), ", x has rank ", rank));
  }
  std::optional<int64_t> n = ir::as_const_int(xt.shape()[static_cast<size_t>(axis)]);
  if (!n) ctx.unsupported(str_cat("blocked quantisation along a symbolic dimension (axis ", axis, ")"));
  std::optional<int64_t> blocks = ir::as_const_int(shape[static_cast<size_t>(axis)]);
  if (blocks && *blocks != (*n + block_size - 1) / block_size) {
    ctx.bad_model(str_cat("blocked quantisation: the ", what, " has ", *blocks, " blocks along axis ", axis, ", x's ",
                          *n, " elements make ", (*n + block_size - 1) / block_size, " of block_size ", block_size));
  }
  // Element j of the axis reads block j / block_size.
  Tensor index = Tensor::empty({*n}, DataType::int64());
  for (int64_t j = 0; j < *n; ++j) static_cast<int64_t*>(index.data())[j] = j / block_size;
  return ctx.emit("take", {v, ctx.constant(index)}, {{"axis", axis}});
}

struct Layout {
  int64_t axis = 1;
  int64_t block_size = 0;
};

Layout layout_of(ImportContext& ctx, const graph::Type& xt) {
  if (!xt.is_tensor() || !xt.has_rank()) ctx.unsupported("x must be a tensor of known rank");
  const int64_t rank = static_cast<int64_t>(xt.shape().size());
  Layout l;
  l.axis = ctx.attr_int("axis", 1);
  l.block_size = ctx.opset() >= 21 ? ctx.attr_int("block_size", 0) : 0;
  if (l.block_size < 0) ctx.bad_model(str_cat("block_size is ", l.block_size, ", expected >= 0"));
  if (l.axis < 0) l.axis += rank;  // checked where a scale of more than one element uses it
  return l;
}

std::vector<Expr> convert_quantize_linear(ImportContext& ctx) {
  Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  Layout l = layout_of(ctx, xt);
  const bool has_zero = ctx.has_input(2);
  DataType out = DataType::uint8();
  if (ctx.has_attr("output_dtype") && ctx.attr_int("output_dtype") != 0) {
    out = anvil_dtype_or_throw(static_cast<int32_t>(ctx.attr_int("output_dtype")), "QuantizeLinear's output_dtype");
  }
  if (has_zero) {
    DataType z = ctx.input(2).type().dtype();
    if (ctx.has_attr("output_dtype") && ctx.attr_int("output_dtype") != 0 && z != out) {
      ctx.bad_model(str_cat("output_dtype is ", out, " but the zero point has dtype ", z));
    }
    out = z;
  }
  std::optional<Range> range = integer_range(out);
  if (minifloat(out)) {
    // y = cast<T>(saturate(x / scale + zero_point)), in float32.
    Expr y = ctx.emit("divide", {cast(ctx, x, DataType::float32()),
                                 cast(ctx, broadcastable(ctx, 1, xt, l.axis, l.block_size), DataType::float32())});
    if (has_zero) y = ctx.emit("add", {y, cast(ctx, broadcastable(ctx, 2, xt, l.axis, l.block_size), DataType::float32())});
    if (ctx.attr_int("saturate", 1) != 0) {
      const double max = ir::minifloat_format(out)->max_finite();
      y = ctx.emit("clip", {y}, {{"min", -max}, {"max", max}});
    }
    return {cast(ctx, y, out)};
  }
  if (!range || out == DataType::int32())
    ctx.unsupported(str_cat("quantising to ", out,
                            " (supported: int8, uint8, int16, uint16, int4, uint4, int2, uint2, float8 but e8m0, float4)"));

  // x / scale in the definition's precision: `precision` (opset 23), else x's dtype; an int32 x
  // (opset 10) in float64, where it is exact.
  DataType xd = xt.dtype();
  DataType cd = xd.is_float() ? xd : DataType::float64();
  if (ctx.opset() >= 23 && ctx.has_attr("precision") && ctx.attr_int("precision") != 0) {
    cd = anvil_dtype_or_throw(static_cast<int32_t>(ctx.attr_int("precision")), "QuantizeLinear's precision");
    if (!cd.is_float()) ctx.bad_model(str_cat("precision is ", cd, ", expected a float type"));
  }
  Expr scale = cast(ctx, broadcastable(ctx, 1, xt, l.axis, l.block_size), cd);
  Expr q = ctx.emit("round", {ctx.emit("divide", {cast(ctx, x, cd), scale})});
  // Integers of 16 bits plus the rounded value: exact in float32.
  DataType wide = cd == DataType::float64() ? cd : DataType::float32();
  q = cast(ctx, q, wide);
  if (has_zero) q = ctx.emit("add", {q, cast(ctx, broadcastable(ctx, 2, xt, l.axis, l.block_size), wide)});
  q = ctx.emit("clip", {q}, {{"min", range->lo}, {"max", range->hi}});
  return {cast(ctx, q, out)};
}

std::vector<Expr> convert_dequantize_linear(ImportContext& ctx) {
  Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  Layout l = layout_of(ctx, xt);
  DataType xd = xt.dtype();
  if (!integer_range(xd) && !minifloat(xd))
    ctx.unsupported(str_cat("dequantising ", xd, " (supported: int8, uint8, int16, uint16, int32, int4, uint4, int2, uint2, float8 but e8m0, float4)"));
  DataType sd = ctx.input(1).type().dtype();
  DataType out = sd;
  if (ctx.opset() >= 23 && ctx.has_attr("output_dtype") && ctx.attr_int("output_dtype") != 0) {
    out = anvil_dtype_or_throw(static_cast<int32_t>(ctx.attr_int("output_dtype")), "DequantizeLinear's output_dtype");
  }
  if (!out.is_float()) ctx.bad_model(str_cat("the output dtype is ", out, ", expected a float type"));
  // float32 as the definition computes; float64 for an int32 x (exact; numpy's promotion of
  // float32 - int32 in the definition) or a float64 scale.
  DataType cd = sd == DataType::float64() || xd == DataType::int32() ? DataType::float64() : DataType::float32();
  Expr d = cast(ctx, x, cd);
  if (ctx.has_input(2)) {
    DataType zd = ctx.input(2).type().dtype();
    if (zd != xd) ctx.bad_model(str_cat("the zero point has dtype ", zd, ", x has ", xd));
    d = ctx.emit("subtract", {d, cast(ctx, broadcastable(ctx, 2, xt, l.axis, l.block_size), cd)});
  }
  Expr y = ctx.emit("multiply", {d, cast(ctx, broadcastable(ctx, 1, xt, l.axis, l.block_size), cd)});
  return {cast(ctx, y, out)};
}

Expr f32_scalar(ImportContext& ctx, double v) {
  Tensor t = Tensor::empty(std::span<const int64_t>(), DataType::float32());
  *static_cast<float*>(t.data()) = static_cast<float>(v);
  return ctx.constant(t);
}

// DynamicQuantizeLinear (opset 11, float32 -> uint8): the range [min(x, 0), max(x, 0)] over 255
// steps (a zero range: scale 1/255), the zero point -min / scale clipped to [0, 255] and rounded,
// y = clip(round(x / scale) + zero point, 0, 255). Outputs y, the scale and the zero point.
std::vector<Expr> convert_dynamic_quantize_linear(ImportContext& ctx) {
  Expr x = ctx.input(0);
  if (x.type().dtype() != DataType::float32()) ctx.bad_model(str_cat("x has dtype ", x.type().dtype(), ", expected float32"));
  graph::Attrs all{{"keepdims", int64_t{0}}};
  Expr zero = f32_scalar(ctx, 0.0);
  Expr hi = ctx.emit("maximum", {ctx.emit("max", {x}, all), zero});
  Expr lo = ctx.emit("minimum", {ctx.emit("min", {x}, all), zero});
  Expr range = ctx.emit("subtract", {hi, lo});
  range = ctx.emit("where", {ctx.emit("equal", {range, zero}), f32_scalar(ctx, 1.0), range});
  Expr scale = ctx.emit("divide", {range, f32_scalar(ctx, 255.0)});
  Expr zp = ctx.emit("subtract", {zero, ctx.emit("divide", {lo, scale})});
  zp = ctx.emit("round", {ctx.emit("clip", {zp}, {{"min", 0.0}, {"max", 255.0}})});
  Expr y = ctx.emit("add", {ctx.emit("round", {ctx.emit("divide", {x, scale})}), zp});
  y = ctx.emit("clip", {y}, {{"min", 0.0}, {"max", 255.0}});
  return {cast(ctx, y, DataType::uint8()), scale, cast(ctx, zp, DataType::uint8())};
}

}  // namespace

void register_quantize_converters() {
  register_converter("QuantizeLinear", convert_quantize_linear);
  register_converter("DequantizeLinear", convert_dequantize_linear);
  register_converter("DynamicQuantizeLinear", convert_dynamic_quantize_linear);
}

}  // namespace anvil::frontend::onnx
