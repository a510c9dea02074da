// cumsum (graph op; ONNX CumSum) as a linear scan: a hand-written kernel (TE has no scan).
#pragma once

#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/ir/buffer.h"
#include "anvil/target/target.h"
#include "anvil/tir/stmt.h"

namespace anvil::ops {

// y = the running sum of x along attrs axis (exclusive: without the element itself; reverse: from
// the end), accumulated in compute_dtype of x (float16/bfloat16 in float32). One sequential pass
// along the axis per position of the other axes: when the axis is not innermost, a vector of
// consecutive inner positions is carried at a time (the lanes of the target, the rest scalar),
// parallel over outer x vector blocks; when it is innermost, one scalar accumulator per row.
tir::Stmt cumsum_kernel(const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                        const std::vector<ir::Buffer>& outputs, const Target& target);

}  // namespace anvil::ops
