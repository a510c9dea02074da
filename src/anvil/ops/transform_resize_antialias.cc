// resize2d_antialias's compute (graph/ops/resize.cc): ONNX Resize with antialias 1, linear or
// cubic. Downsampling by a scale s < 1 stretches the interpolation filter by 1/s, so each output
// reads n = 2 * ceil-ish(support / s) taps per axis (support 1 linear, 2 cubic), with weights
// f((j - ratio) * s) normalised to sum 1, as the ONNX reference computes them: the taps are
// base + j for j in [start, start + n), base = ceil(x) - 1 and ratio = x - base in (0, 1] for the
// source coordinate x, out-of-input taps read the edge (or, exclude_outside, weigh 0).
//
// Separable: a pass along W into [N, C, H, OW], then one along H; each a reduction over its taps
// with the per-output weight sums as small reductions of their own. Computed in float32.
#include <cmath>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/nn_util.h"
#include "anvil/ops/resize_coords.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using graph::get_float;
using graph::get_int;
using graph::get_string;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using te::Tensor;

const DataType kF32 = DataType::float32();

PrimExpr f32(const PrimExpr& e) { return e.dtype() == kF32 ? e : cast(kF32, e); }
PrimExpr fconst(double v) { return ir::make_const(kF32, v); }

// One axis's filter: taps start .. start + n - 1 around base, the scale the filter is stretched by.
struct Filter {
  ResizeAxis axis;
  bool cubic;
  double a;       // cubic_coeff_a
  double scale;   // min(s, 1)
  int start, n;
  bool exclude;
  std::string mode;  // coordinate_transformation_mode
};

Filter make_filter(const ResizeAxis& axis, const std::string& mode, bool cubic, double a, bool exclude) {
  double s = axis.scale_attr;
  if (s <= 0) {
    auto in = ir::as_const_int(axis.in), out = ir::as_const_int(axis.out);
    if (!in || !out) not_implemented_error("resize2d_antialias of a symbolic spatial size");
    s = double(*out) / double(*in);
  }
  s = std::min(s, 1.0);
  // The reference: linear start = floor(-1 / s) + 1, cubic floor(-2 / s) + 1; n = 2 - 2 * start.
  int start = static_cast<int>(std::floor((cubic ? -2.0 : -1.0) / s) + 1);
  return {axis, cubic, a, s, start, 2 - 2 * start, exclude, mode};
}

// The source coordinate's base tap and ratio in (0, 1].
struct Where {
  PrimExpr base, ratio;
};

Where where_of(const Filter& f, const PrimExpr& o) {
  PrimExpr x = resize_source_coord(f.mode, f.axis, o);
  // Clamp far coordinates so that the int cast stays in range (such taps all read the edge).
  x = max(min(x, f32(f.axis.in) + fconst(f.n)), fconst(-f.n - 1));
  PrimExpr b = ceil(x) - fconst(1);
  return {cast(DataType::int32(), b), x - b};
}

// The unnormalised weight of tap k (offset start + k) for output o.
PrimExpr raw_weight(const Filter& f, const PrimExpr& o, const PrimExpr& k) {
  Where w = where_of(f, o);
  PrimExpr j = k + f.start;
  PrimExpr d = abs((f32(j) - w.ratio) * fconst(f.scale));
  PrimExpr v;
  if (!f.cubic) {
    v = max(fconst(1) - d, fconst(0));
  } else {
    PrimExpr a = fconst(f.a);
    PrimExpr near = ((a + fconst(2)) * d - (a + fconst(3))) * d * d + fconst(1);
    PrimExpr far = ((a * d - a * fconst(5)) * d + a * fconst(8)) * d - a * fconst(4);
    v = select(d <= fconst(1), near, select(d < fconst(2), far, fconst(0)));
  }
  if (f.exclude) {
    PrimExpr idx = w.base + j;
    v = select(idx >= 0 && idx < f.axis.in, v, fconst(0));
  }
  return v;
}

PrimExpr tap_index(const Filter& f, const PrimExpr& o, const PrimExpr& k) {
  PrimExpr idx = where_of(f, o).base + k + f.start;
  return max(min(idx, f.axis.in - 1), 0);
}

// The weight sums per output index along one axis.
Tensor weight_sums(const Filter& f, const std::string& name) {
  te::IterVar k = te::reduce_axis(0, f.n, "k");
  return te::compute({f.axis.out}, [&](Var o) { return te::sum(raw_weight(f, o, k), {k}); }, name);
}

std::vector<Tensor> resize2d_antialias(const graph::CallNode& call, const std::vector<Tensor>& inputs) {
  const Tensor& x = inputs[0];
  const graph::Attrs& at = call.attrs();
  const std::string mode = get_string(at, "mode", "linear");
  if (mode != "linear" && mode != "cubic") value_error("resize2d_antialias: mode '", mode, "', expected linear or cubic");
  const std::string ct = get_string(at, "coordinate_transformation_mode", "half_pixel");
  if (ct == "tf_crop_and_resize") not_implemented_error("resize2d_antialias with tf_crop_and_resize");
  const bool cubic = mode == "cubic", exclude = get_int(at, "exclude_outside", 0) != 0;
  const double a = get_float(at, "cubic_coeff_a", -0.75);
  const std::vector<PrimExpr>& os = call.type().shape();
  const PrimExpr N = x.shape()[0], C = x.shape()[1], H = x.shape()[2];
  Filter fh = make_filter({x.shape()[2], os[2], get_float(at, "scale_h", 0.0), fconst(0), fconst(1)}, ct, cubic, a, exclude);
  Filter fw = make_filter({x.shape()[3], os[3], get_float(at, "scale_w", 0.0), fconst(0), fconst(1)}, ct, cubic, a, exclude);
  Tensor sum_w = weight_sums(fw, "resize_aa_sum_w"), sum_h = weight_sums(fh, "resize_aa_sum_h");
  te::IterVar kx = te::reduce_axis(0, fw.n, "kx"), ky = te::reduce_axis(0, fh.n, "ky");
  Tensor along_w = te::compute(
      {N, C, H, os[3]},
      [&](Var n, Var c, Var y, Var ox) {
        PrimExpr w = raw_weight(fw, ox, kx) / sum_w(ox);
        return te::sum(w * f32(x(n, c, y, tap_index(fw, ox, kx))), {kx});
      },
      "resize_aa_w");
  Tensor out = te::compute(
      os,
      [&](Var n, Var c, Var oy, Var ox) {
        PrimExpr w = raw_weight(fh, oy, ky) / sum_h(oy);
        return te::sum(w * along_w(n, c, tap_index(fh, oy, ky), ox), {ky});
      },
      "resize2d_antialias");
  if (x.dtype() == kF32) return {out};
  return {te::compute(
      os, [&](Var n, Var c, Var y, Var xx) { return cast(x.dtype(), out(n, c, y, xx)); }, "resize2d_antialias_cast")};
}

// The weight sums and the W pass at root (parallel over their leading axes); the H pass (and
// the cast to a narrower float) vectorised along the output row.
void resize2d_antialias_schedule(te::Schedule& s, const std::vector<te::Tensor>& outs, const Target& target) {
  for (const char* name : {"resize_aa_sum_w", "resize_aa_sum_h", "resize_aa_w"}) {
    te::Tensor t = find_tensor(outs, name);
    if (t.defined()) fuse_all_parallel(s[t], t.axis());
  }
  te::Tensor main = find_tensor(outs, "resize2d_antialias");
  if (main.defined() && main.get() != outs[0].get()) schedule_row_reduction(s, outs[0], main, target);
  else schedule_row_reduction(s, outs[0], target);
}

}  // namespace

void register_resize_antialias_strategies() {
  register_implementation("resize2d_antialias", "cpu",
                          {"resize2d_antialias.cpu", resize2d_antialias, resize2d_antialias_schedule});
}

}  // namespace anvil::ops
