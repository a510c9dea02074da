// ONNX LinearAttention (opset 27): the recurrence over the T tokens unrolled at import (T static,
// at most kMaxSteps), in float32 as the operator's function body computes it. With the state S
// [B, H_kv, d_k, d_v] (past_state or zeros) and per token t:
//
//   S' = exp(decay_t) * S          (gated, gated_delta; decay per key dim or per head)
//   S  = S' + k_t ⊗ v_t            (linear, gated)
//   S  = S' + k_t ⊗ beta_t (v_t - S'^T k_t)   (delta, gated_delta)
//   o_t = scale * q_t^T S          (a kv head's state read by its q_num_heads / kv_num_heads
//                                   query heads; scale 1/sqrt(d_k) when 0)
//
// output is the o_t packed [B, T, H_q * d_v]; present_state the last S, both in query's dtype.
#include <cmath>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Expr;
using ir::PrimExpr;

// Unrolling emits about ten calls a token: longer sequences need a loop Anvil does not have.
constexpr int64_t kMaxSteps = 256;

Expr reshape(ImportContext& ctx, const Expr& x, std::vector<PrimExpr> shape) {
  return ctx.emit("reshape", {x, graph::ShapeExpr::make(std::move(shape))});
}

Expr as_f32(ImportContext& ctx, const Expr& x) {
  return x.type().dtype() == DataType::float32() ? x : ctx.emit("cast", {x}, {{"dtype", DataType::float32()}});
}

struct Packed {
  Expr x;           // [B, T, heads, width] float32
  PrimExpr width;   // the last dim
};

// Input i [B, T, heads * width] as [B, T, heads, width], float32.
Packed unpack(ImportContext& ctx, int i, int64_t heads, const char* what) {
  Expr x = ctx.input(i);
  const graph::Type& t = x.type();
  if (!t.is_tensor() || !t.has_rank() || t.ndim() != 3) ctx.bad_model(str_cat(what, " must be 3-d [B, T, heads * d]"));
  std::optional<int64_t> packed = ir::as_const_int(t.dim(2));
  if (!packed) ctx.unsupported(str_cat(what, " with a symbolic last dim"));
  if (*packed % heads != 0) ctx.bad_model(str_cat(what, "'s last dim ", *packed, " does not split into ", heads, " heads"));
  PrimExpr w = ir::int_imm(*packed / heads);
  return {reshape(ctx, as_f32(ctx, x), {t.dim(0), t.dim(1), ir::int_imm(heads), w}), w};
}

// Token t of a [B, T, H, W] tensor as [B, H, W].
Expr token(ImportContext& ctx, const Packed& p, int64_t t) {
  Expr s = ctx.emit("strided_slice", {p.x},
                    {{"begin", AttrValue::ints({t})}, {"end", AttrValue::ints({t + 1})},
                     {"strides", AttrValue::ints({1})}, {"axes", AttrValue::ints({1})}});
  const std::vector<PrimExpr>& d = p.x.type().shape();
  return reshape(ctx, s, {d[0], d[2], d[3]});
}

std::vector<Expr> convert_linear_attention(ImportContext& ctx) {
  const std::string rule = ctx.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    ctx.bad_model(str_cat("update_rule '", rule, "', expected linear, gated, delta or gated_delta"));
  const bool gated = rule == "gated" || rule == "gated_delta", delta = rule == "delta" || rule == "gated_delta";
  const int64_t hq = ctx.attr_int("q_num_heads"), hkv = ctx.attr_int("kv_num_heads");
  if (hq <= 0 || hkv <= 0 || hq % hkv != 0)
    ctx.bad_model(str_cat("q_num_heads ", hq, " is not a positive multiple of kv_num_heads ", hkv));
  if (gated && !ctx.has_input(4)) ctx.bad_model(str_cat("update_rule '", rule, "' needs the decay input"));
  if (delta && !ctx.has_input(5)) ctx.bad_model(str_cat("update_rule '", rule, "' needs the beta input"));
  const DataType out_dtype = ctx.input(0).type().dtype();
  Packed q = unpack(ctx, 0, hq, "query"), k = unpack(ctx, 1, hkv, "key"), v = unpack(ctx, 2, hkv, "value");
  const PrimExpr batch = q.x.type().dim(0);
  std::optional<int64_t> steps = ir::as_const_int(q.x.type().dim(1));
  if (!steps) ctx.unsupported("a symbolic sequence length (the recurrence is unrolled at import)");
  if (*steps < 1) ctx.unsupported("an empty sequence");
  if (*steps > kMaxSteps) ctx.unsupported(str_cat("a sequence of ", *steps, " tokens (unrolled at import: at most ", kMaxSteps, ")"));
  const int64_t dk = *ir::as_const_int(q.width), dv = *ir::as_const_int(v.width);
  if (*ir::as_const_int(k.width) != dk) ctx.bad_model(str_cat("key's head size differs from query's ", dk));

  double scale = ctx.attr_float("scale", 0.0);
  if (scale == 0.0) scale = 1.0 / std::sqrt(static_cast<double>(dk));
  Tensor sc = Tensor::empty({}, DataType::float32());
  *static_cast<float*>(sc.data()) = static_cast<float>(scale);
  Expr scale_c = ctx.constant(sc);

  const std::vector<PrimExpr> state_shape = {batch, ir::int_imm(hkv), ir::int_imm(dk), ir::int_imm(dv)};
  Expr state = ctx.has_input(3) ? as_f32(ctx, ctx.input(3))
                                : ctx.emit("full", {graph::ShapeExpr::make(state_shape)},
                                           {{"value", 0.0}, {"dtype", DataType::float32()}});
  // decay [B, T, H_kv * d_k] or [B, T, H_kv]; beta [B, T, H_kv] or [B, T, 1].
  Packed decay, beta;
  if (gated) decay = unpack(ctx, 4, hkv, "decay");
  if (delta) {
    Expr b = ctx.input(5);
    const graph::Type& bt = b.type();
    if (!bt.has_rank() || bt.ndim() != 3) ctx.bad_model("beta must be 3-d [B, T, H_kv or 1]");
    beta = {reshape(ctx, as_f32(ctx, b), {bt.dim(0), bt.dim(1), bt.dim(2), ir::int_imm(1)}), ir::int_imm(1)};
  }
  const PrimExpr one = ir::int_imm(1), kv = ir::int_imm(hkv), group = ir::int_imm(hq / hkv);
  std::vector<Expr> outs;
  for (int64_t t = 0; t < *steps; ++t) {
    Expr kt = token(ctx, k, t), vt = token(ctx, v, t);
    if (gated) {
      Expr g = ctx.emit("exp", {token(ctx, decay, t)});  // [B, H_kv, d_k or 1]
      const std::vector<PrimExpr>& gs = g.type().shape();
      state = ctx.emit("multiply", {state, reshape(ctx, g, {gs[0], gs[1], gs[2], one})});
    }
    Expr k_col = reshape(ctx, kt, {batch, kv, ir::int_imm(dk), one});
    Expr write = vt;  // [B, H_kv, d_v]
    if (delta) {
      Expr k_row = reshape(ctx, kt, {batch, kv, one, ir::int_imm(dk)});
      Expr read = reshape(ctx, ctx.emit("matmul", {k_row, state}), {batch, kv, ir::int_imm(dv)});  // S'^T k
      write = ctx.emit("multiply", {token(ctx, beta, t), ctx.emit("subtract", {vt, read})});
    }
    state = ctx.emit("add", {state, ctx.emit("multiply", {k_col, reshape(ctx, write, {batch, kv, one, ir::int_imm(dv)})})});
    // Query heads h*g .. h*g + g-1 read kv head h: [B, H_kv, g, d_k] @ [B, H_kv, d_k, d_v].
    Expr qt = reshape(ctx, token(ctx, q, t), {batch, kv, group, ir::int_imm(dk)});
    Expr o = ctx.emit("multiply", {ctx.emit("matmul", {qt, state}), scale_c});
    outs.push_back(reshape(ctx, o, {batch, one, ir::int_imm(hq * dv)}));
  }
  Expr y = outs.size() == 1 ? outs[0] : ctx.emit("concat", outs, {{"axis", AttrValue(1)}});
  if (out_dtype != DataType::float32()) {
    y = ctx.emit("cast", {y}, {{"dtype", out_dtype}});
    state = ctx.emit("cast", {state}, {{"dtype", out_dtype}});
  }
  return {y, state};
}

}  // namespace

void register_linear_attention_converter() { register_converter("LinearAttention", convert_linear_attention); }

}  // namespace anvil::frontend::onnx
