// Lowering a scheduled tensor-expression graph to a loop-level PrimFunc.
//
//   PrimFunc f = te::lower(s, {A, B, C}, "matmul");
//   PrimFunc g = te::lower(s2, {X, alpha, Y}, "scale");   // Var alpha: a scalar parameter
//
// args are the function's parameters in order: tensors (buffer parameters: placeholders the
// computation reads and the outputs; intermediate tensors may be listed too: they are then
// written to that argument instead of a temporary) and scalar Vars (int, uint, float or bool;
// passed by value, as TVM's tvm.lower(s, [A, alpha, B])). Symbolic shape variables are bound
// from the argument buffers; one that is also listed as a Var is a scalar parameter instead, and
// the tensors' shapes are checked against its value when the kernel is called: an AssertStmt at
// the top of the body per tensor dimension that is exactly that var (the param buffer's shape
// there is a fresh size var A_shape_<d>, bound from the tensor), failing with a ValueError such as
// "scale: argument 'n' is 9 but A.shape[0] is 10 (A has shape [n])".
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
// computed at a loop while another reader sits outside that loop, an argument given twice, a
// Var argument of handle dtype, a variable the computation uses that is neither listed nor a
// shape (stride, offset) variable of an argument tensor (named in the message).
#pragma once

#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "anvil/te/schedule.h"
#include "anvil/tir/prim_func.h"

namespace anvil::te {

// One parameter of lower: a tensor (buffer parameter) or a scalar variable.
using LowerArg = std::variant<Tensor, Var>;

tir::PrimFunc lower(const Schedule& schedule, const std::vector<LowerArg>& args, const std::string& name = "main");
// Tensors only (e.g. a std::vector<Tensor> built elsewhere).
tir::PrimFunc lower(const Schedule& schedule, const std::vector<Tensor>& args, const std::string& name = "main");
// So that a braced list, lower(s, {A, B}) or lower(s, {A, alpha, B}), is not ambiguous.
inline tir::PrimFunc lower(const Schedule& schedule, std::initializer_list<LowerArg> args,
                           const std::string& name = "main") {
  return lower(schedule, std::vector<LowerArg>(args), name);
}

// A hand-written loop nest over argument buffers (an operator TE cannot express, e.g. a scan
// carrying an accumulator) as a PrimFunc with lower's parameter convention: params in order
// (buffers, scalar Vars); a buffer dimension that is exactly a listed scalar Var gets the same
// fresh size var and AssertStmt check as lower gives it, so both kinds of kernel are called alike.
tir::PrimFunc make_kernel(const std::string& name, std::vector<tir::FuncParam> params, tir::Stmt body);

}  // namespace anvil::te
