// resize2d's compute (graph/ops/resize.cc): ONNX Resize on NCHW, nearest / linear / cubic over
// the spatial axes, computed in float32 as ONNX Runtime does (linear clamps the source
// coordinate into the input first, cubic reads edge-clamped taps, exclude_outside renormalises
// the taps inside). tf_crop_and_resize's roi is an attribute, or a third argument read at run time;
// the scales known only at run time a last argument read at scale_index. Scheduled as an injective op; registered from register_transform_strategies.
#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/resize_coords.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {
namespace {

using graph::get_float;
using graph::get_int;
using graph::get_string;
using ir::DataType;
using ir::PrimExpr;
using te::Tensor;

const DataType kF32 = DataType::float32();

PrimExpr f32(const PrimExpr& e) { return e.dtype() == kF32 ? e : cast(kF32, e); }
PrimExpr fconst(double v) { return ir::make_const(kF32, v); }

using Axis = ResizeAxis;

}  // namespace

PrimExpr ResizeAxis::given_scale() const { return scale_value.defined() ? scale_value : fconst(scale_attr); }
PrimExpr ResizeAxis::scale() const { return has_scale() ? given_scale() : f32(out) / f32(in); }

PrimExpr resize_source_coord(const std::string& mode, const Axis& a, const PrimExpr& x) {
  PrimExpr xf = f32(x);
  if (mode == "half_pixel") return (xf + fconst(0.5)) / a.scale() - fconst(0.5);
  if (mode == "pytorch_half_pixel") return select(a.out > 1, (xf + fconst(0.5)) / a.scale() - fconst(0.5), fconst(0));
  if (mode == "align_corners") {
    // With scales, ONNX takes the resized length as scale * in (a float), not the floored size.
    if (a.has_scale()) {
      PrimExpr len = a.given_scale() * f32(a.in) - fconst(1);
      return select(len > fconst(0), xf * f32(a.in - 1) / max(len, fconst(1e-30)), fconst(0));
    }
    return select(a.out > 1, xf * f32(a.in - 1) / f32(max(a.out - 1, 1)), fconst(0));
  }
  if (mode == "asymmetric") return xf / a.scale();
  if (mode == "tf_half_pixel_for_nn") return (xf + fconst(0.5)) / a.scale();
  if (mode == "half_pixel_symmetric") {
    // ONNX 19: the output's float extent is scale * in; the sampling grid is centred on the input.
    PrimExpr out_f = a.has_scale() ? a.given_scale() * f32(a.in) : f32(a.out);
    PrimExpr adjustment = f32(a.out) / out_f;
    PrimExpr offset = f32(a.in) * fconst(0.5) * (fconst(1) - adjustment);
    return offset + (xf + fconst(0.5)) / a.scale() - fconst(0.5);
  }
  if (mode == "tf_crop_and_resize") {
    PrimExpr len = f32(a.in - 1);
    return select(a.out > 1,
                  a.roi_start * len + xf * (a.roi_end - a.roi_start) * len / f32(max(a.out - 1, 1)),
                  fconst(0.5) * (a.roi_start + a.roi_end) * len);
  }
  not_implemented_error("resize2d: coordinate_transformation_mode '", mode, "'");
}

namespace {

PrimExpr source_coord(const std::string& mode, const Axis& a, const PrimExpr& x) { return resize_source_coord(mode, a, x); }

PrimExpr clamp_index(const PrimExpr& i, const PrimExpr& in) { return max(min(i, in - 1), 0); }
PrimExpr to_int(const PrimExpr& f) { return cast(DataType::int32(), f); }

// `down` (nearest_mode "legacy"): true when a scale is below 1 (then ceil, else floor).
PrimExpr nearest_index(const std::string& nm, const PrimExpr& xo, const PrimExpr& in, const PrimExpr& down = {}) {
  PrimExpr r;
  if (nm == "round_prefer_floor") r = ceil(xo - fconst(0.5));
  else if (nm == "round_prefer_ceil") r = floor(xo + fconst(0.5));
  else if (nm == "floor") r = floor(xo);
  else if (nm == "legacy") r = select(down, ceil(xo), floor(xo));
  else r = ceil(xo);
  // Clamp in float first: a huge or negative coordinate must not overflow the int cast.
  return clamp_index(to_int(max(min(r, f32(in)), fconst(-1))), in);
}

struct Taps {
  std::vector<PrimExpr> index;   // clamped input indices
  std::vector<PrimExpr> weight;  // float32
};

Taps linear_taps(const PrimExpr& xo_raw, const PrimExpr& in) {
  PrimExpr xo = max(min(xo_raw, f32(in - 1)), fconst(0));
  PrimExpr x0 = floor(xo), t = xo - x0;
  PrimExpr i0 = to_int(x0);
  return {{clamp_index(i0, in), clamp_index(i0 + 1, in)}, {fconst(1) - t, t}};
}

Taps cubic_taps(const PrimExpr& xo_raw, const PrimExpr& in, double A, bool exclude_outside) {
  PrimExpr xo = max(min(xo_raw, f32(in) + fconst(2)), fconst(-3));  // keeps the int cast in range
  PrimExpr x0 = floor(xo), t = xo - x0;
  PrimExpr i0 = to_int(x0);
  PrimExpr a = fconst(A);
  auto far = [&](const PrimExpr& d) { return ((a * d - a * fconst(5)) * d + a * fconst(8)) * d - a * fconst(4); };
  auto near = [&](const PrimExpr& d) { return ((a + fconst(2)) * d - (a + fconst(3))) * d * d + fconst(1); };
  std::vector<PrimExpr> w = {far(t + fconst(1)), near(t), near(fconst(1) - t), far(fconst(2) - t)};
  Taps taps;
  PrimExpr total = fconst(0);
  for (int k = 0; k < 4; ++k) {
    PrimExpr idx = i0 + (k - 1);
    if (exclude_outside) w[k] = select((idx >= 0) && (idx < in), w[k], fconst(0));
    total = total + w[k];
    taps.index.push_back(clamp_index(idx, in));
  }
  for (int k = 0; k < 4; ++k) taps.weight.push_back(exclude_outside ? w[k] / total : w[k]);
  return taps;
}

std::vector<Tensor> resize2d(const graph::CallNode& call, const std::vector<Tensor>& inputs) {
  const Tensor& x = inputs[0];
  const graph::Attrs& at = call.attrs();
  std::string mode = get_string(at, "mode", "nearest");
  std::string ct = get_string(at, "coordinate_transformation_mode", "half_pixel");
  std::string nm = get_string(at, "nearest_mode", "round_prefer_floor");
  double A = get_float(at, "cubic_coeff_a", -0.75);
  bool exclude = get_int(at, "exclude_outside", 0) != 0;
  const std::vector<PrimExpr>& os = call.type().shape();
  std::vector<double> roi = graph::has_attr(at, "roi") ? graph::get_floats(at, "roi") : std::vector<double>{0, 0, 1, 1};  // h_start, w_start, h_end, w_end
  double extrapolation = get_float(at, "extrapolation_value", 0.0);
  DataType dt = x.dtype();
  Tensor out = te::compute(os, [&](ir::Var n, ir::Var c, ir::Var y, ir::Var xx) {
    // A roi argument (ONNX's roi input at run time): h_start, w_start, h_end, w_end at roi_index.
    std::vector<PrimExpr> r;
    const bool run_time_scales = graph::has_attr(at, "scale_index");
    if (inputs.size() > (run_time_scales ? 3u : 2u)) {
      for (int64_t i : graph::get_ints(at, "roi_index")) r.push_back(f32(inputs[2](ir::int_imm(i))));
    } else {
      for (double v : roi) r.push_back(fconst(v));
    }
    Axis ah{x.shape()[2], os[2], get_float(at, "scale_h", 0.0), r[0], r[2]};
    Axis aw{x.shape()[3], os[3], get_float(at, "scale_w", 0.0), r[1], r[3]};
    if (run_time_scales) {
      // The scales argument (last) at scale_index: the model's scales known only at run time.
      std::vector<int64_t> si = graph::get_ints(at, "scale_index");
      if (si[0] >= 0) ah.scale_value = f32(inputs.back()(ir::int_imm(si[0])));
      if (si[1] >= 0) aw.scale_value = f32(inputs.back()(ir::int_imm(si[1])));
    }
    PrimExpr yo = source_coord(ct, ah, y), xo = source_coord(ct, aw, xx);
    // tf_crop_and_resize: coordinates outside the input read extrapolation_value.
    auto crop = [&](const PrimExpr& v) {
      if (ct != "tf_crop_and_resize") return v;
      PrimExpr inside = (yo >= fconst(0)) && (yo <= f32(ah.in - 1)) && (xo >= fconst(0)) && (xo <= f32(aw.in - 1));
      return select(inside, v, ir::make_const(v.dtype(), extrapolation));
    };
    if (mode == "nearest") {
      PrimExpr down = nm == "legacy" ? (ah.scale() < fconst(1)) || (aw.scale() < fconst(1)) : PrimExpr();
      return crop(x(n, c, nearest_index(nm, yo, ah.in, down), nearest_index(nm, xo, aw.in, down)));
    }
    Taps ty = mode == "linear" ? linear_taps(yo, ah.in) : cubic_taps(yo, ah.in, A, exclude);
    Taps tx = mode == "linear" ? linear_taps(xo, aw.in) : cubic_taps(xo, aw.in, A, exclude);
    PrimExpr acc;
    for (size_t i = 0; i < ty.index.size(); ++i) {
      PrimExpr row;
      for (size_t j = 0; j < tx.index.size(); ++j) {
        PrimExpr term = f32(x(n, c, ty.index[i], tx.index[j])) * tx.weight[j];
        row = row.defined() ? row + term : term;
      }
      acc = acc.defined() ? acc + row * ty.weight[i] : row * ty.weight[i];
    }
    return crop(dt == kF32 ? acc : cast(dt, acc));
  }, "resize2d");
  return {out};
}

}  // namespace

void register_resize_strategies() {
  register_implementation("resize2d", "cpu", {"resize2d.cpu", resize2d, schedule_injective});
}

}  // namespace anvil::ops
