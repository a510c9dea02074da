// Direct NCHW conv2d compute for the gpu family.
#include "anvil/ops/gpu/conv2d_gpu.h"

#include <string>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/te/reduction.h"

namespace anvil::ops::gpu {

using ir::PrimExpr;
using ir::Var;

std::vector<te::Tensor> conv2d_nchw_direct(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const graph::Attrs& a = call.attrs();
  std::string layout = graph::get_string(a, "kernel_layout", "OIHW");
  if (layout != "OIHW")
    not_implemented_error("nn.conv2d on the gpu family: kernel_layout '", layout, "' (expected OIHW)");
  std::vector<int64_t> st = graph::get_ints(a, "strides", {1, 1}), pad = graph::get_ints(a, "padding", {0, 0, 0, 0}),
                       dil = graph::get_ints(a, "dilation", {1, 1});
  const int64_t groups = graph::get_int(a, "groups", 1);
  const te::Tensor& data = in[0];
  const te::Tensor& weight = in[1];
  const ir::DataType out_dt = call.type().dtype();
  const std::vector<PrimExpr> oshape = call.type().shape();
  const PrimExpr H = data.shape()[2], W = data.shape()[3];
  const int pt = int(pad[0]), pl = int(pad[1]), pb = int(pad[2]), pr = int(pad[3]);
  te::Tensor padded = data;
  if (pt != 0 || pl != 0 || pb != 0 || pr != 0) {
    padded = te::compute(
        {data.shape()[0], data.shape()[1], H + (pt + pb), W + (pl + pr)},
        [&](Var n, Var c, Var y, Var x) {
          PrimExpr inside = y >= pt && y < H + pt && x >= pl && x < W + pl;
          // select evaluates both sides: the read's indices are clamped into the input.
          PrimExpr yy = ir::min(ir::max(y - pt, 0), H - 1), xx = ir::min(ir::max(x - pl, 0), W - 1);
          return ir::select(inside, data(n, c, yy, xx), ir::make_zero(data.dtype()));
        },
        "conv2d_pad");
  }
  const PrimExpr Cg = weight.shape()[1], O = oshape[1];
  const PrimExpr out_per_group = groups == 1 ? O : ir::floordiv(O, int(groups));
  te::IterVar rc = te::reduce_axis(0, Cg, "rc"), ry = te::reduce_axis(0, weight.shape()[2], "ry"),
              rx = te::reduce_axis(0, weight.shape()[3], "rx");
  const int sh = int(st[0]), sw = int(st[1]), dh = int(dil[0]), dw = int(dil[1]);
  return {te::compute(
      oshape,
      [&](Var n, Var o, Var y, Var x) {
        PrimExpr ic = groups == 1 ? PrimExpr(rc.var()) : ir::floordiv(o, out_per_group) * Cg + rc.var();
        PrimExpr v = ir::cast(out_dt, padded(n, ic, y * sh + ry.var() * dh, x * sw + rx.var() * dw)) *
                     ir::cast(out_dt, weight(o, rc.var(), ry.var(), rx.var()));
        return te::sum(v, {rc, ry, rx});
      },
      "conv2d_nchw_gpu")};
}

}  // namespace anvil::ops::gpu
