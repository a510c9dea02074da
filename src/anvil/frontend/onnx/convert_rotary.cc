// ONNX RotaryEmbedding (opset 23), composed from graph ops in x's own layout (no transposes):
//
//   x: [B, H, S, D], or [B, S, H*D] with num_heads (viewed as [B, S, H, D])
//   cos/sin: cache[position_ids] ([B, S, R/2]) with position_ids, else the caches as given
//   x1, x2: the halves of x[..., :R] (interleaved: its even and odd elements)
//   rotated: (cos x1 - sin x2, sin x1 + cos x2), concatenated (interleaved: element pairs)
//   y: rotated followed by x[..., R:], in x's shape
//
// R is rotary_embedding_dim (0: the head size D). The caches broadcast over the heads axis.
#include <cstdint>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/ir/expr.h"

namespace anvil::frontend::onnx {
namespace {

using graph::AttrValue;
using graph::Expr;
using ir::PrimExpr;

// x[..., begin:end:step] on the last axis.
Expr last_axis_slice(ImportContext& ctx, const Expr& x, int64_t begin, int64_t end, int64_t step) {
  return ctx.emit("strided_slice", {x},
                  {{"begin", AttrValue::ints({begin})},
                   {"end", AttrValue::ints({end})},
                   {"strides", AttrValue::ints({step})},
                   {"axes", AttrValue::ints({-1})}});
}

std::vector<Expr> convert_rotary_embedding(ImportContext& ctx) {
  Expr x = ctx.input(0);
  const graph::Type& xt = x.type();
  if (!xt.is_tensor() || !xt.has_rank() || (xt.ndim() != 3 && xt.ndim() != 4))
    ctx.bad_model("input must be a tensor of rank 3 or 4");
  const bool interleaved = ctx.attr_int("interleaved", 0) != 0;
  const int64_t num_heads = ctx.attr_int("num_heads", 0);
  const bool three_d = xt.ndim() == 3;
  std::vector<PrimExpr> shape = xt.shape();
  Expr x4 = x;
  PrimExpr head;
  if (three_d) {
    if (num_heads <= 0) ctx.bad_model("a 3-d input needs the num_heads attribute");
    std::optional<int64_t> hidden = ir::as_const_int(shape[2]);
    if (!hidden) ctx.unsupported("a 3-d input with a symbolic hidden size");
    if (*hidden % num_heads != 0) ctx.bad_model(str_cat("hidden size ", *hidden, " is not a multiple of num_heads ", num_heads));
    head = ir::int_imm(*hidden / num_heads);
    x4 = ctx.emit("reshape", {x, graph::ShapeExpr::make({shape[0], shape[1], ir::int_imm(num_heads), head})});
  } else {
    head = shape[3];
  }
  std::optional<int64_t> d = ir::as_const_int(head);
  if (!d) ctx.unsupported("a symbolic head size");
  int64_t rot = ctx.attr_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = *d;
  if (rot < 0 || rot > *d || rot % 2 != 0)
    ctx.bad_model(str_cat("rotary_embedding_dim ", rot, " must be even and at most the head size ", *d));
  Expr cos = ctx.input(1), sin = ctx.input(2);
  if (ctx.has_input(3)) {
    Expr pos = ctx.input(3);
    cos = ctx.emit("take", {cos, pos}, {{"axis", int64_t{0}}});
    sin = ctx.emit("take", {sin, pos}, {{"axis", int64_t{0}}});
  }
  if (cos.type().ndim() != 3 || sin.type().ndim() != 3)
    ctx.bad_model("cos_cache/sin_cache must be [batch, sequence, rotary_embedding_dim / 2] (or gathered to it)");
  std::optional<int64_t> half = ir::as_const_int(cos.type().shape()[2]);
  if (half && *half != rot / 2)
    ctx.bad_model(str_cat("the caches' last dimension is ", *half, ", rotary_embedding_dim / 2 is ", rot / 2));
  // [B, S, R/2] -> [B, S, 1, R/2] (3-d: heads after the sequence) or [B, 1, S, R/2].
  const int64_t heads_axis = three_d ? 2 : 1;
  cos = ctx.emit("expand_dims", {cos}, {{"axes", AttrValue::ints({heads_axis})}});
  sin = ctx.emit("expand_dims", {sin}, {{"axes", AttrValue::ints({heads_axis})}});
  Expr x1 = interleaved ? last_axis_slice(ctx, x4, 0, rot, 2) : last_axis_slice(ctx, x4, 0, rot / 2, 1);
  Expr x2 = interleaved ? last_axis_slice(ctx, x4, 1, rot, 2) : last_axis_slice(ctx, x4, rot / 2, rot, 1);
  Expr real = ctx.emit("subtract", {ctx.emit("multiply", {cos, x1}), ctx.emit("multiply", {sin, x2})});
  Expr imag = ctx.emit("add", {ctx.emit("multiply", {sin, x1}), ctx.emit("multiply", {cos, x2})});
  Expr rotated;
  if (interleaved) {
    // [.., R/2, 2] pairs, flattened back to [.., R].
    Expr pairs = ctx.emit("concat",
                          {ctx.emit("expand_dims", {real}, {{"axes", AttrValue::ints({4})}}),
                           ctx.emit("expand_dims", {imag}, {{"axes", AttrValue::ints({4})}})},
                          {{"axis", int64_t{4}}});
    std::vector<PrimExpr> s4 = x4.type().shape();
    s4[3] = ir::int_imm(rot);
    rotated = ctx.emit("reshape", {pairs, graph::ShapeExpr::make(s4)});
  } else {
    rotated = ctx.emit("concat", {real, imag}, {{"axis", int64_t{3}}});
  }
  Expr y = rot == *d ? rotated
                     : ctx.emit("concat", {rotated, last_axis_slice(ctx, x4, rot, *d, 1)}, {{"axis", int64_t{3}}});
  if (three_d) y = ctx.emit("reshape", {y, graph::ShapeExpr::make(shape)});
  return {y};
}

}  // namespace

void register_rotary_converter() { register_converter("RotaryEmbedding", convert_rotary_embedding); }

}  // namespace anvil::frontend::onnx
