// nn.conv3d_transpose for CPUs (ONNX ConvTranspose of 3-d spatial data): the 2-d transposed
// convolution's gather form with a depth axis. out[n, o, z, y, x] = sum over the input channels of
// o's group and the kernel box of data[n, ci, (z + pd - rz*dd) / sd, ...] * w[ci, o % Og, rz, ry, rx],
// where every division is exact and inside the input (zero otherwise). Weight [C, O/g, KD, KH, KW].
// Vectorised along the output row (schedule_row_reduction).
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_strategies.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using ir::PrimExpr;
using ir::Var;

PrimExpr clamp(const PrimExpr& v, const PrimExpr& hi) { return ir::min(ir::max(v, 0), hi - 1); }

std::vector<te::Tensor> conv3d_transpose_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const graph::Attrs& a = call.attrs();
  const std::vector<int64_t> st = graph::get_ints(a, "strides", {1, 1, 1}), pad = graph::get_ints(a, "padding", {0, 0, 0, 0, 0, 0}),
                             dil = graph::get_ints(a, "dilation", {1, 1, 1});
  const int groups = int(graph::get_int(a, "groups", 1));
  const te::Tensor& data = in[0];
  const te::Tensor& weight = in[1];
  const PrimExpr cg = ir::floordiv(data.shape()[1], groups), og = weight.shape()[1];
  te::IterVar rc = te::reduce_axis(0, cg, "rc");
  std::vector<te::IterVar> r = {te::reduce_axis(0, weight.shape()[2], "rz"), te::reduce_axis(0, weight.shape()[3], "ry"),
                                te::reduce_axis(0, weight.shape()[4], "rx")};
  return {te::compute(
      out_shape(call),
      [&](const std::vector<Var>& i) {
        PrimExpr ci = groups == 1 ? PrimExpr(rc.var()) : ir::floordiv(i[1], og) * cg + rc.var();
        PrimExpr oi = groups == 1 ? PrimExpr(i[1]) : ir::floormod(i[1], og);
        PrimExpr ok;
        std::vector<PrimExpr> src = {i[0], ci};
        for (int k = 0; k < 3; ++k) {
          PrimExpr t = i[2 + k] + int(pad[k]) - r[k].var() * int(dil[k]);
          PrimExpr s = ir::floordiv(t, int(st[k]));
          PrimExpr in_k = t >= 0 && s < data.shape()[2 + k];
          if (st[k] > 1) in_k = in_k && ir::eq(ir::floormod(t, int(st[k])), 0);
          ok = ok.defined() ? (ok && in_k) : in_k;
          src.push_back(clamp(s, data.shape()[2 + k]));
        }
        PrimExpr v = data(src) * weight(std::vector<PrimExpr>{ci, oi, r[0].var(), r[1].var(), r[2].var()});
        return te::sum(ir::select(ok, v, ir::make_zero(data.dtype())), {rc, r[0], r[1], r[2]});
      },
      "conv3d_transpose")};
}

}  // namespace

void register_conv3d_transpose_strategies() {
  register_implementation("nn.conv3d_transpose", "cpu",
                          {"conv3d_transpose_ncdhw.x86", conv3d_transpose_compute,
                           [](te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
                             inline_elementwise_except(s, outs, {});
                             te::Tensor conv = find_tensor(outs, "conv3d_transpose");
                             schedule_row_reduction(s, outs[0], conv.defined() ? conv : outs[0], target);
                           }});
}

}  // namespace anvil::ops
