// ONNX Attention (opset 23; 24 adds nonpad_kv_seqlen): scaled dot-product attention as graph
// calls, in the order of the operator's function body:
//
//   Q, K, V: 4-d [B, heads, S, D], or 3-d [B, S, heads * D] split by q_num_heads / kv_num_heads
//   K, V = Concat(past_key, K), Concat(past_value, V) along S    -> present_key, present_value
//   GQA (q heads a multiple g of kv heads): kv head h serves q heads h*g .. h*g + g-1
//   QK = (Q * sqrt(scale)) @ (K^T * sqrt(scale))                  scale: 1/sqrt(D) by default
//   softcap > 0: QK = softcap * tanh(QK / softcap)
//   QK += bias: attn_mask (bool: 0 where true, -inf where false; a float mask added; its last
//         dim extended with -inf up to the total length), is_causal (-inf where the query row plus
//         the past length is below the key column), nonpad_kv_seqlen (-inf at columns past it)
//   Y = Softmax(QK) @ V, 3-d again for a 3-d Q
//
// qk_matmul_output is QK after the product (mode 0), the softcap (1), the bias (2) or the
// softmax (3).
#include <cmath>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Expr;
using ir::PrimExpr;

// A 0-d constant v of a float dtype (float32 constant, cast for the others).
Expr float_scalar(ImportContext& ctx, DataType dtype, double v) {
  Tensor t = Tensor::empty({}, dtype == DataType::float64() ? dtype : DataType::float32());
  if (dtype == DataType::float64()) *static_cast<double*>(t.data()) = v;
  else *static_cast<float*>(t.data()) = static_cast<float>(v);
  Expr c = ctx.constant(t);
  return t.dtype() == dtype ? c : ctx.emit("cast", {c}, {{"dtype", dtype}});
}

Expr reshape(ImportContext& ctx, const Expr& x, std::vector<PrimExpr> shape) {
  return ctx.emit("reshape", {x, graph::ShapeExpr::make(std::move(shape))});
}

Expr transpose(ImportContext& ctx, const Expr& x, std::vector<int64_t> axes) {
  return ctx.emit("transpose", {x}, {{"axes", AttrValue::ints(std::move(axes))}});
}

// Input i as [B, heads, S, D]: a 3-d [B, S, heads * D] one split by the `heads_attr` attribute.
Expr heads_of(ImportContext& ctx, int i, const char* heads_attr) {
  Expr x = ctx.input(i);
  const graph::Type& t = x.type();
  if (!t.is_tensor() || !t.has_rank() || (t.ndim() != 3 && t.ndim() != 4))
    ctx.unsupported(str_cat("input ", i, " of rank ", t.has_rank() ? t.ndim() : -1, " (expected 3 or 4)"));
  if (t.ndim() == 4) return x;
  if (!ctx.has_attr(heads_attr)) ctx.bad_model(str_cat("a 3-d input ", i, " needs the attribute '", heads_attr, "'"));
  int64_t heads = ctx.attr_int(heads_attr);
  std::optional<int64_t> hidden = ir::as_const_int(t.dim(2));
  if (heads <= 0 || (hidden && *hidden % heads != 0))
    ctx.bad_model(str_cat("input ", i, "'s hidden size ", hidden.value_or(0), " does not split into ", heads_attr, " = ",
                          heads, " heads"));
  PrimExpr d = hidden ? PrimExpr(ir::int_imm(*hidden / heads)) : ir::floordiv(t.dim(2), static_cast<int>(heads));
  return transpose(ctx, reshape(ctx, x, {t.dim(0), t.dim(1), ir::int_imm(heads), d}), {0, 2, 1, 3});
}

// GQA: [B, kv_heads, T, D] -> [B, q_heads, T, D], each kv head repeated `group` times in place.
Expr repeat_heads(ImportContext& ctx, const Expr& x, int64_t group) {
  if (group == 1) return x;
  const std::vector<PrimExpr>& s = x.type().shape();
  Expr e = ctx.emit("expand_dims", {x}, {{"axes", AttrValue::ints({2})}});
  e = ctx.emit("broadcast_to", {e, graph::ShapeExpr::make({s[0], s[1], ir::int_imm(group), s[2], s[3]})});
  return reshape(ctx, e, {s[0], ir::int_imm(ir::as_const_int(s[1]).value() * group), s[2], s[3]});
}

// 0 .. n-1 as int64.
Expr iota(ImportContext& ctx, const PrimExpr& n) {
  return ctx.emit("arange", {graph::ShapeExpr::make({n})},
                  {{"start", 0.0}, {"delta", 1.0}, {"dtype", DataType::int64()}});
}

Expr add_bias(ImportContext& ctx, const Expr& acc, const Expr& b) { return acc.defined() ? ctx.emit("add", {acc, b}) : b; }

std::vector<Expr> convert_attention(ImportContext& ctx) {
  Expr q = heads_of(ctx, 0, "q_num_heads"), k = heads_of(ctx, 1, "kv_num_heads"), v = heads_of(ctx, 2, "kv_num_heads");
  const bool q3d = ctx.input(0).type().ndim() == 3;
  const DataType t = q.type().dtype();
  if (!t.is_float()) ctx.unsupported(str_cat("Attention of ", t));
  PrimExpr past_len = ir::int_imm(0);
  if (ctx.has_input(4) != ctx.has_input(5)) ctx.bad_model("past_key and past_value must be given together");
  if (ctx.has_input(4)) {
    past_len = ctx.input(4).type().dim(2);
    k = ctx.emit("concat", {ctx.input(4), k}, {{"axis", 2}});
    v = ctx.emit("concat", {ctx.input(5), v}, {{"axis", 2}});
  }
  const std::vector<PrimExpr>& qs = q.type().shape();
  const PrimExpr batch = qs[0], q_len = qs[2], total = k.type().dim(2);
  std::optional<int64_t> qh = ir::as_const_int(qs[1]), kvh = ir::as_const_int(k.type().dim(1));
  if (!qh || !kvh) ctx.unsupported("symbolic head counts");
  if (*kvh <= 0 || *qh % *kvh != 0) ctx.bad_model(str_cat(*qh, " query heads are not a multiple of ", *kvh, " kv heads"));

  double scale;
  if (ctx.has_attr("scale")) {
    scale = ctx.attr_float("scale");
  } else {
    std::optional<int64_t> d = ir::as_const_int(qs[3]);
    if (!d) ctx.unsupported("the default scale of a symbolic head size");
    scale = 1.0 / std::sqrt(static_cast<double>(*d));
  }
  Expr root = float_scalar(ctx, t, std::sqrt(scale));  // on both sides, as the function body
  Expr kt = transpose(ctx, repeat_heads(ctx, k, *qh / *kvh), {0, 1, 3, 2});
  Expr qk = ctx.emit("matmul", {ctx.emit("multiply", {q, root}), ctx.emit("multiply", {kt, root})});
  std::vector<Expr> stages{qk};

  const double softcap = ctx.attr_float("softcap", 0.0);
  if (softcap > 0) {
    Expr c = float_scalar(ctx, t, softcap);
    qk = ctx.emit("multiply", {ctx.emit("tanh", {ctx.emit("divide", {qk, c})}), c});
  }
  stages.push_back(qk);

  Expr bias, zero = float_scalar(ctx, t, 0.0), neg_inf = float_scalar(ctx, t, -INFINITY);
  if (ctx.has_input(3)) {
    Expr mask = ctx.input(3);
    const graph::Type& mt = mask.type();
    if (!mt.has_rank() || mt.ndim() < 1) ctx.unsupported("an attn_mask of unknown rank");
    if (mt.dtype() == DataType::boolean()) mask = ctx.emit("where", {mask, zero, neg_inf});
    else if (mt.dtype() != t) mask = ctx.emit("cast", {mask}, {{"dtype", t}});
    // A mask shorter than the total length: the columns past it are masked (-inf). Its last dim
    // is at most the total, so a symbolic difference is taken as such (it may be 0 at run time).
    PrimExpr missing = arith::simplify(total - mt.dim(mt.ndim() - 1));
    std::optional<int64_t> m = ir::as_const_int(missing);
    if (m && *m < 0) ctx.bad_model(str_cat("attn_mask has ", -*m, " columns more than the total sequence length"));
    if (!m || *m > 0) {
      std::vector<PrimExpr> fill = mt.shape();
      fill.back() = missing;
      Expr rest = ctx.emit("full", {graph::ShapeExpr::make(fill)}, {{"value", -INFINITY}, {"dtype", t}});
      mask = ctx.emit("concat", {mask, rest}, {{"axis", AttrValue(-1)}});
    }
    bias = mask;
  }
  if (ctx.attr_int("is_causal", 0) != 0) {
    std::optional<int64_t> past = ir::as_const_int(past_len);
    if (!past) ctx.unsupported("is_causal with a symbolic past length");
    Tensor offset = Tensor::empty({}, DataType::int64());
    *static_cast<int64_t*>(offset.data()) = *past;
    Expr rows = reshape(ctx, iota(ctx, q_len), {q_len, ir::int_imm(1)});
    Expr shifted = ctx.emit("add", {rows, ctx.constant(offset)});
    Expr above = ctx.emit("less", {shifted, iota(ctx, total)});  // [q_len, total]
    bias = add_bias(ctx, bias, ctx.emit("where", {above, neg_inf, zero}));
  }
  if (ctx.has_input(6)) {  // opset 24: keys past nonpad_kv_seqlen[b] are padding
    Expr n = ctx.input(6);
    if (n.type().dtype() != DataType::int64()) n = ctx.emit("cast", {n}, {{"dtype", DataType::int64()}});
    Expr keep = ctx.emit("less", {iota(ctx, total), reshape(ctx, n, {batch, ir::int_imm(1)})});  // [B, total]
    Expr pad = ctx.emit("where", {keep, zero, neg_inf});
    bias = add_bias(ctx, bias, reshape(ctx, pad, {batch, ir::int_imm(1), ir::int_imm(1), total}));
  }
  if (bias.defined()) qk = ctx.emit("add", {qk, bias});
  stages.push_back(qk);

  Expr p = ctx.emit("nn.softmax", {qk}, {{"axis", AttrValue(-1)}});
  stages.push_back(p);
  Expr y = ctx.emit("matmul", {p, repeat_heads(ctx, v, *qh / *kvh)});
  if (q3d) {
    const std::vector<PrimExpr>& ys = y.type().shape();
    y = reshape(ctx, transpose(ctx, y, {0, 2, 1, 3}), {ys[0], ys[2], arith::simplify(ys[3] * static_cast<int>(*qh))});
  }
  const int64_t mode = ctx.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) ctx.bad_model(str_cat("qk_matmul_output_mode is ", mode, ", expected 0 to 3"));
  return {y, k, v, stages[static_cast<size_t>(mode)]};
}

}  // namespace

void register_attention_converter() { register_converter("Attention", convert_attention); }

}  // namespace anvil::frontend::onnx
