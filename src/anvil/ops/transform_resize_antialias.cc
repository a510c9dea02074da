// resize2d_antialias's compute (graph/ops/resize.cc): ONNX Resize with antialias 1, linear or
// cubic. Downsampling by a scale s < 1 stretches the interpolation filter by 1/s, so each output
// reads n = 2 * ceil-ish(support / s) taps per axis (support 1 linear, 2 cubic), with weights
// f((j - ratio) * s) normalised to sum 1, as the ONNX reference computes them: the taps are
// base + j for j in [start, start + n), base = ceil(x) - 1 and ratio = x - base in (0, 1] for the
// source coordinate x, out-of-input taps read the edge (or, exclude_outside, weigh 0).
//
// Separable: a pass along W into [N, C, H, OW], then one along H; each a reduction over its taps
// with the per-output weight sums as small reductions of their own. Computed in float32.
// With scales or sizes known only at run time the tap counts are Vars of a last Shape argument
// (the host computes them from the scale as make_filter does) and the scale is read in-kernel.
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
// Static (scale, start, n), or known only at run time (scale_v from the axis, n_v a Var).
struct Filter {
  ResizeAxis axis;
  bool cubic;
  double a;       // cubic_coeff_a
  double scale;   // min(s, 1)
  int start, n;
  bool exclude;
  std::string mode;  // coordinate_transformation_mode
  PrimExpr scale_v = {}, start_v = {}, n_v = {};
  te::Tensor scales = {};  // the run-time scales, read at scale_idx (>= 0) inside each compute
  int64_t scale_idx = -1;
  // The filter to use inside a compute: a scales read must be made there (te tracks its reads).
  Filter bound() const {
    if (!n_v.defined()) return *this;
    Filter g = *this;
    if (scale_idx >= 0) g.axis.scale_value = f32(scales(ir::int_imm(scale_idx)));
    g.scale_v = min(g.axis.scale(), fconst(1));
    return g;
  }
  PrimExpr fscale() const { return scale_v.defined() ? scale_v : fconst(scale); }
  PrimExpr offset(const PrimExpr& k) const { return start_v.defined() ? k + start_v : k + start; }
  te::IterVar reduce_axis(const char* name) const { return n_v.defined() ? te::reduce_axis(0, n_v, name) : te::reduce_axis(0, n, name); }
};

// The run-time case: the scale (given or out / in) read in the kernel, the tap count n a Var the
// host computed (-2 floor(-support / min(s, 1)), as make_filter), start = 1 - n / 2.
Filter run_time_filter(const ResizeAxis& axis, const std::string& mode, bool cubic, double a, bool exclude,
                       const PrimExpr& n, const te::Tensor& scales, int64_t scale_idx) {
  Filter f{axis, cubic, a, 1.0, 0, 0, exclude, mode};
  f.scales = scales;
  f.scale_idx = scale_idx;
  f.n_v = n;
  f.start_v = 1 - n / 2;
  return f;
}

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
  x = f.n_v.defined() ? max(min(x, f32(f.axis.in) + f32(f.n_v)), fconst(-1) - f32(f.n_v))
                      : max(min(x, f32(f.axis.in) + fconst(f.n)), fconst(-f.n - 1));
  PrimExpr b = ceil(x) - fconst(1);
  return {cast(DataType::int32(), b), x - b};
}

// The unnormalised weight of tap k (offset start + k) for output o.
PrimExpr raw_weight(const Filter& f, const PrimExpr& o, const PrimExpr& k) {
  Where w = where_of(f, o);
  PrimExpr j = f.offset(k);
  PrimExpr d = abs((f32(j) - w.ratio) * f.fscale());
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
  PrimExpr idx = where_of(f, o).base + f.offset(k);
  return max(min(idx, f.axis.in - 1), 0);
}

// The weight sums per output index along one axis.
Tensor weight_sums(const Filter& f, const std::string& name) {
  te::IterVar k = f.reduce_axis("k");
  return te::compute({f.axis.out}, [&](Var o) { return te::sum(raw_weight(f.bound(), o, k), {k}); }, name);
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
  ResizeAxis ah{x.shape()[2], os[2], get_float(at, "scale_h", 0.0), fconst(0), fconst(1)};
  ResizeAxis aw{x.shape()[3], os[3], get_float(at, "scale_w", 0.0), fconst(0), fconst(1)};
  Filter fh, fw;
  if (call.args().size() > 2) {
    // Scales or sizes known only at run time: the last argument a Shape [n_h, n_w] of tap counts;
    // with scale_index, the scales (argument 2) read at it.
    const std::vector<PrimExpr>* taps = call.args().back().type().shape_values();
    if (taps == nullptr || taps->size() != 2) value_error("resize2d_antialias: the last argument must be a Shape [n_h, n_w]");
    std::vector<int64_t> si = graph::has_attr(at, "scale_index") ? graph::get_ints(at, "scale_index")
                                                                  : std::vector<int64_t>{-1, -1};
    te::Tensor scales = graph::has_attr(at, "scale_index") ? inputs[2] : te::Tensor();
    fh = run_time_filter(ah, ct, cubic, a, exclude, (*taps)[0], scales, si[0]);
    fw = run_time_filter(aw, ct, cubic, a, exclude, (*taps)[1], scales, si[1]);
  } else {
    fh = make_filter(ah, ct, cubic, a, exclude);
    fw = make_filter(aw, ct, cubic, a, exclude);
  }
  Tensor sum_w = weight_sums(fw, "resize_aa_sum_w"), sum_h = weight_sums(fh, "resize_aa_sum_h");
  te::IterVar kx = fw.reduce_axis("kx"), ky = fh.reduce_axis("ky");
  Tensor along_w = te::compute(
      {N, C, H, os[3]},
      [&](Var n, Var c, Var y, Var ox) {
        Filter f = fw.bound();
        PrimExpr w = raw_weight(f, ox, kx) / sum_w(ox);
        return te::sum(w * f32(x(n, c, y, tap_index(f, ox, kx))), {kx});
      },
      "resize_aa_w");
  Tensor out = te::compute(
      os,
      [&](Var n, Var c, Var oy, Var ox) {
        Filter f = fh.bound();
        PrimExpr w = raw_weight(f, oy, ky) / sum_h(oy);
        return te::sum(w * along_w(n, c, tap_index(f, oy, ky), ox), {ky});
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
