// Lowering a scheduled tensor-expression graph to a loop-level PrimFunc.
//
//   PrimFunc f = te::lower(s, {A, B, C}, "matmul");
//
// args are the function's buffer parameters in order: placeholders the computation reads and
// the outputs (intermediate tensors may be listed too: they are then written to that argument
// instead of a temporary). Symbolic shape variables are bound from the argument buffers.
//
// What lowering does:
//   * bound inference: the region of each stage that its consumers read, relaxed over the
//     consumer loops inside the stage's attach point (compute_at) and clamped to the tensor's
//     shape; outputs and arguments cover their whole shape;
//   * loop nests in each stage's leaf order, loops from 0 to the leaf extent (split: outer
//     ceil(extent / factor), inner factor), root indices rebuilt from the leaves; when a factor
//     may not divide the extent a guard `if root < extent` sits under the innermost loop it
//     needs (loop_partition peels it later);
//   * reductions: the identity stored before the first reduction loop (in a nest over the
//     data-parallel loops inside that point), then acc = combine(acc, value);
//   * intermediate stages realised as Allocate'd buffers of the inferred region (scope from
//     set_scope/cache_read/cache_write, strides from storage_align) at the root or inside the
//     attach loop; compute_inline'd stages substituted into their readers;
//   * loop kinds (parallel, vectorized, unrolled, thread binding) and pragmas as loop
//     annotations ("pragma_<key>"); storage_align also as an AttrStmt "buffer_dim_align".
// Errors (ValueError): an output or a placeholder that is read but not among args, a stage
// computed at a loop while another reader sits outside that loop, an argument given twice.
#pragma once

#include <string>
#include <vector>

#include "anvil/te/schedule.h"
#include "anvil/tir/prim_func.h"

namespace anvil::te {

tir::PrimFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name = "main");

}  // namespace anvil::te
