// scatter_elements and scatter_nd (graph ops; ONNX ScatterElements / ScatterND) as one copy and
// one pass over the updates: hand-written kernels, linear in the sizes (a scatter written as a
// gather would cost output x updates).
#pragma once

#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/ir/buffer.h"
#include "anvil/target/target.h"
#include "anvil/tir/stmt.h"

namespace anvil::ops {

// out = data, then for each update in row-major order of the indices: the element it addresses
// (negative indices wrap; one out of range is skipped) becomes the update ("none": the last one
// wins) or its combination with the update (attrs reduction add / mul / max / min). The copy is
// parallel and vectorised; the updates go in order, one after another, so repeated indices
// combine as ONNX says; scatter_nd's slices (x's dims after the index) are vectorised.
tir::Stmt scatter_elements_kernel(const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                                  const std::vector<ir::Buffer>& outputs, const Target& target);
tir::Stmt scatter_nd_kernel(const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                            const std::vector<ir::Buffer>& outputs, const Target& target);

}  // namespace anvil::ops
