// lower_parallel: prepares parallel loops for the CPU code generators.
//
// Representation (the contract with codegen/llvm and codegen/c): a parallel region stays a
// `For` of kind parallel. The code generator outlines its body into a function of type
// AnvilParallelLambda (runtime/c_abi.h), packs the values it uses (vars, buffer data pointers)
// into a closure struct and calls the runtime's parallel_launch; each task runs a static chunk
// [task_id * ceil(extent / num_task), ...) of the iterations, num_task taken from the
// AnvilParallelEnv at run time (so one compilation serves any pool size).
//
// This pass makes that representation canonical:
//   * a parallel loop nested inside another parallel loop becomes serial (a launch inside a
//     task would run serially anyway, and one outlined function per region is simpler);
//   * a parallel loop with a non-zero min is rebased to start at 0 (the code generators chunk
//     [0, extent)): `for v in [m, m + e) parallel: S` -> `for v' in [0, e) parallel: S[v := v' + m]`.
// Everything else is unchanged. Interpreting the result gives the same answers as before (the
// interpreter runs parallel loops serially).
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

Stmt lower_parallel(const Stmt& body);
PrimFunc lower_parallel(const PrimFunc& f);

}  // namespace anvil::tir::passes

namespace anvil::tir {
// Also reachable as tir::lower_parallel (callers written before the passes namespace).
using passes::lower_parallel;
}  // namespace anvil::tir
