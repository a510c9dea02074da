// The source coordinate of a resize output index (ONNX Resize's coordinate_transformation_mode),
// shared by resize2d (transform_resize.cc) and resize2d_antialias (transform_resize_antialias.cc).
#pragma once

#include <string>

#include "anvil/ir/expr.h"

namespace anvil::ops {

struct ResizeAxis {
  ir::PrimExpr in, out;       // int32 extents
  double scale_attr;          // > 0: the model's scale
  ir::PrimExpr roi_start, roi_end;  // tf_crop_and_resize (float32; constants or read from a roi input)
  ir::PrimExpr scale_value = {};    // defined: the model's scale read at run time (float32; over scale_attr)
  bool has_scale() const { return scale_value.defined() || scale_attr > 0; }
  ir::PrimExpr given_scale() const;  // float32: scale_value or scale_attr (has_scale())
  ir::PrimExpr scale() const;  // float32: the given scale, or out / in
};

// The float32 source coordinate of output index x along `a` under `mode`.
ir::PrimExpr resize_source_coord(const std::string& mode, const ResizeAxis& a, const ir::PrimExpr& x);

}  // namespace anvil::ops
