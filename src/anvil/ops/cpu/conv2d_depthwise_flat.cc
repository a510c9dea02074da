// Depthwise convolution along the flattened padded plane (see the header).
#include "anvil/ops/cpu/conv2d_depthwise_flat.h"

#include <optional>

#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

std::optional<int64_t> cst(const PrimExpr& e) { return ir::as_const_int(e); }

}  // namespace

std::vector<te::Tensor> depthwise_flat_compute(const te::Tensor& data, const te::Tensor& weight,
                                               const std::vector<int>& pad, int stride) {
  if (data.dtype() != DataType::float32() || data.ndim() != 4 || weight.ndim() != 4) return {};
  if (stride != 1 && stride != 2) return {};
  for (int d = 1; d < 4; ++d)
    if (!cst(data.shape()[d]) || !cst(weight.shape()[d])) return {};
  if (!cst(weight.shape()[0]) || *cst(weight.shape()[1]) != 1 || *cst(weight.shape()[0]) != *cst(data.shape()[1]))
    return {};
  const int H = int(*cst(data.shape()[2])), W = int(*cst(data.shape()[3]));
  const int R = int(*cst(weight.shape()[2])), S = int(*cst(weight.shape()[3]));
  const int pt = pad[0], pl = pad[1], pb = pad[2], pr = pad[3], st = stride;
  const int Hp = H + pt + pb, Wp0 = W + pl + pr;
  if (Hp < R || Wp0 < S) return {};
  const int Ho = (Hp - R) / st + 1, Wo = (Wp0 - S) / st + 1;
  // Rows of Wp, a multiple of the stride (zero columns added on the right), so that a phase's
  // row of Wp holds Wq = Wp / stride outputs' worth of columns.
  const int Wp = (Wp0 + st - 1) / st * st, Wq = Wp / st;
  // Longer rows vectorise well as they are (at stride 2 already from 28: 144x56 -> 28 measured
  // 0.7x ONNX Runtime row by row, 0.8x flat).
  if (Wo % 16 == 0 || Wo >= (st == 1 ? 48 : 28)) return {};
  // Phase p holds the padded rows p, p + stride, ...: output row y's tap row ry is row
  // y + ry / stride of phase ry % stride, so i = y * Wq + x reads phase element
  // stride * i + (ry / stride) * Wp + rx. One zero row more than the outputs need: the dropped
  // values of the last output row read up to a row past them.
  const int rows = Ho + (R - 1) / st + 1;
  const te::Tensor& x = data;
  te::Tensor padded = te::compute(
      {x.shape()[0], x.shape()[1], st, rows * Wp},
      [&](Var n, Var c, Var p, Var j) {
        PrimExpr yy = ir::floordiv(j, Wp) * st + p, xx = ir::floormod(j, Wp);
        PrimExpr inside = yy >= pt && yy < H + pt && xx >= pl && xx < W + pl;
        PrimExpr y_in = ir::min(ir::max(yy - pt, 0), H - 1), x_in = ir::min(ir::max(xx - pl, 0), W - 1);
        return ir::select(inside, x(n, c, y_in, x_in), ir::make_zero(x.dtype()));
      },
      "padded_flat");
  te::IterVar ry = te::reduce_axis(0, R, "ry"), rx = te::reduce_axis(0, S, "rx");
  te::Tensor acc = te::compute(
      {x.shape()[0], x.shape()[1], Ho * Wq},
      [&](Var n, Var c, Var i) {
        PrimExpr phase = st == 1 ? PrimExpr(0) : ir::floormod(ry, st), row = st == 1 ? PrimExpr(ry) : ir::floordiv(ry, st);
        return te::sum(padded(n, c, phase, i * st + row * Wp + rx) * weight(c, 0, ry, rx), {ry, rx});
      },
      "conv2d_flat");
  return {te::compute(
      {x.shape()[0], x.shape()[1], Ho, Wo}, [&](Var n, Var c, Var y, Var q) { return acc(n, c, y * Wq + q); },
      "conv2d")};
}

bool schedule_depthwise_flat(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  te::Tensor acc = find_tensor(outs, "conv2d_flat");
  if (!acc.defined()) return false;
  te::Tensor padded = find_tensor(outs, "padded_flat"), conv = find_tensor(outs, "conv2d");
  const te::Tensor& out = outs[0];
  inline_elementwise_except(s, outs, {"padded_flat"});  // conv2d and any epilogue into the output
  // acc holds Ho rows of Wq = Wp / stride; the padded phases rows of Wp.
  const int wp = int(*cst(acc.shape()[2]) / *cst(conv.shape()[2]) * *cst(padded.shape()[2]));
  te::Stage& o = s[out];
  te::IterVar plane = o.fuse(out.axis(0), out.axis(1));
  o.parallel(plane);
  const int row_vf = row_vector_factor(out.shape()[3], lanes_for(target, out.dtype()));
  if (row_vf > 0) {
    auto [qo, qi] = o.split(out.axis(3), row_vf);
    o.vectorize(qi);
  }
  // The padded copy row by row, so its conditions are linear in the column (select_to_if and
  // loop_partition leave a contiguous middle).
  te::Stage& p = s[padded];
  p.compute_at(o, plane);
  p.split(padded.axis(3), wp);
  // The accumulation a vector at a time (a guarded last vector that loop_partition peels), the
  // taps unrolled outside the lanes.
  te::Stage& a = s[acc];
  a.compute_at(o, plane);
  const int lanes = lanes_for(target, acc.dtype());
  auto [io, ii] = a.split(acc.axis(2), lanes);
  a.reorder({acc.axis(0), acc.axis(1), io, acc.reduce_axis(0), acc.reduce_axis(1), ii});
  a.unroll(acc.reduce_axis(0));
  a.unroll(acc.reduce_axis(1));
  a.vectorize(ii);
  return true;
}

}  // namespace anvil::ops
