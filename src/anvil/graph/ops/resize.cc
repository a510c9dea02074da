// resize2d(data NCHW, size: ShapeExpr [out_h, out_w]; attrs):
//   mode "nearest" | "linear" | "cubic"; coordinate_transformation_mode "half_pixel" |
//   "pytorch_half_pixel" | "align_corners" | "asymmetric" | "tf_half_pixel_for_nn";
//   nearest_mode "round_prefer_floor" | "round_prefer_ceil" | "floor" | "ceil";
//   cubic_coeff_a (-0.75), exclude_outside (0/1); scale_h, scale_w (floats: the ONNX scales when
//   the model gave scales, whose coordinate mapping uses them rather than out/in; 0 = out/in).
// The importer computes the output size (floor(in * scale) for scales). ONNX Resize / Upsample.
// A third argument roi (1-d float, tf_crop_and_resize) is read at run time at roi_index
// [h_start, w_start, h_end, w_end]; otherwise the roi attribute (the same four values).
// A last argument scales (1-d float32, ONNX's scales or keep_aspect_ratio scale known only at run
// time) is read at scale_index [h, w] (-1: out / in) as the scale the coordinate mapping uses;
// nearest_mode "legacy" (Resize before opset 11 with such scales) rounds down when neither scale
// is below 1, up otherwise.
// resize2d_antialias(data, size; the same attrs, mode linear | cubic): antialias 1, the filter
// stretched by 1 / scale when downsampling. With scales or sizes known only at run time: (data,
// size, [scales,] taps) with taps a Shape [n_h, n_w] of the per-axis tap counts (fresh Vars) and
// scales read at scale_index as for resize2d.
#include "anvil/base/error.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/transform.h"

namespace anvil::graph::ops {
namespace {

bool one_of(const std::string& s, std::initializer_list<const char*> options) {
  for (const char* o : options)
    if (s == o) return true;
  return false;
}

Type resize2d_type(const CallNode& call) {
  const Type& t = tensor_arg(call, 0);
  if (t.ndim() != 4) value_error("data has rank ", t.ndim(), ", expected 4 (NCHW)");
  if (!t.dtype().is_float()) type_error("data has dtype ", t.dtype(), ", expected a float type");
  const std::vector<PrimExpr>& size = shape_arg(call, 1);
  if (size.size() != 2) value_error("size has ", size.size(), " values, expected 2 (out_h, out_w)");
  std::string mode = get_string(call.attrs(), "mode", "nearest");
  if (!one_of(mode, {"nearest", "linear", "cubic"})) value_error("mode '", mode, "', expected nearest, linear or cubic");
  std::string ct = get_string(call.attrs(), "coordinate_transformation_mode", "half_pixel");
  if (!one_of(ct, {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn",
                   "half_pixel_symmetric", "tf_crop_and_resize"}))
    value_error("coordinate_transformation_mode '", ct, "' is not supported");
  std::string nm = get_string(call.attrs(), "nearest_mode", "round_prefer_floor");
  if (!one_of(nm, {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "legacy"})) value_error("nearest_mode '", nm, "'");
  size_t nargs = call.args().size();
  if (call.op() == "resize2d_antialias" && nargs > 2) {
    // Scales or sizes known only at run time: the last argument the tap counts [n_h, n_w] (a Shape).
    if (shape_arg(call, static_cast<int>(nargs - 1)).size() != 2) value_error("taps has a length other than 2 (n_h, n_w)");
    if (get_string(call.attrs(), "coordinate_transformation_mode", "half_pixel") == "tf_crop_and_resize")
      value_error("resize2d_antialias with tf_crop_and_resize");
    --nargs;
  }
  if (has_attr(call.attrs(), "scale_index")) {
    if (nargs < 3) value_error("scale_index needs a scales argument (the last)");
    const Type& sc = tensor_arg(call, static_cast<int>(nargs - 1));
    if (sc.ndim() != 1 || sc.dtype() != DataType::float32()) type_error("scales is ", to_string(sc), ", expected a 1-d float32 tensor");
    std::vector<int64_t> idx = get_ints(call.attrs(), "scale_index");
    auto n = ir::as_const_int(sc.dim(0));
    if (idx.size() != 2) value_error("scale_index has ", idx.size(), " values, expected 2");
    for (int64_t i : idx)
      if (i < -1 || (n && i >= *n)) value_error("scale_index ", i, " is out of range for scales ", to_string(sc));
    --nargs;
  } else if (nm == "legacy") {
    value_error("nearest_mode 'legacy' needs a scales argument");
  }
  if (nargs > 3) value_error("resize2d takes data, size, roi and scales");
  if (nargs > 2) {
    // roi at run time: a 1-d float tensor; roi_index names its h_start, w_start, h_end, w_end.
    if (ct != "tf_crop_and_resize") value_error("a roi argument needs coordinate_transformation_mode tf_crop_and_resize");
    const Type& r = tensor_arg(call, 2);
    if (r.ndim() != 1 || !r.dtype().is_float()) type_error("roi is ", to_string(r), ", expected a 1-d float tensor");
    std::vector<int64_t> idx = get_ints(call.attrs(), "roi_index");
    auto n = ir::as_const_int(r.dim(0));
    if (idx.size() != 4) value_error("roi_index has ", idx.size(), " values, expected 4");
    for (int64_t i : idx)
      if (i < 0 || (n && i >= *n)) value_error("roi_index ", i, " is out of range for roi ", to_string(r));
  }
  return Type::tensor({t.shape()[0], t.shape()[1], size[0], size[1]}, t.dtype());
}

}  // namespace

void register_resize_ops() {
  register_op({"resize2d", 2, 4, OpPattern::kInjective, resize2d_type,
               "resize2d(data NCHW, size; mode, coordinate_transformation_mode, ...): ONNX Resize"});
  // A reduction per output over a scale-dependent number of taps: not fused as an injective op.
  register_op({"resize2d_antialias", 2, 4, OpPattern::kOpaque, resize2d_type,
               "resize2d_antialias(data NCHW, size; mode linear|cubic, ...): ONNX Resize with antialias 1"});
}

}  // namespace anvil::graph::ops
