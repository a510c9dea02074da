// TIR -> LLVM IR: the CPU code generator.
//
//   Module m = build_llvm({f, g}, Target::parse("llvm"));   // kind "llvm" (llvm_module.h)
//   m["f"](a, b, n);                                         // JIT on the host
//   pipeline::export_library(m, "lib.so");                   // or a shared library
//
// Each PrimFunc becomes the exported kernel `__anvil_fn_<name>` (name: the "global_symbol"
// attribute). The kernel unpacks and checks its AnvilValue arguments and calls an internal
// compute function whose buffer pointers carry `noalias` (so arguments must not overlap) and
// the element alignment. Before translation each function goes through storage_flatten and
// lower_parallel (tir/passes). Argument errors go through the runtime's error_set and the kernel
// returns -1; the caller sees anvil::Error("kernel '<name>' failed: <message>") with:
//   TypeError   "<f>: expected 3 arguments (A, B, n) but got 2"
//   TypeError   "<f>: argument 0 (A) must be a tensor but got int"
//   TypeError   "<f>: argument 2 (n) must be an int but got tensor"
//   TypeError   "<f>: argument 0 (A) has 4 lanes but expected 1"
//   TypeError   "<f>: argument 0 (A) has dtype float64 but expected float32"
//   ValueError  "<f>: argument 0 (A) has 3 dimensions but expected 2"
//   ValueError  "<f>: argument 2 (C) has shape [64, 32] but expected [64, 64]"
//   ValueError  "<f>: argument 0 (A) has strides [1, 4] but expected [4, 1] (compact)"
//   ValueError  "<f>: argument 0 (A) is on device type 2 but expected the CPU (1)"
//   ValueError  "<f>: argument 0 (A) has byte offset 4 but expected 0"   (buffers with an elem_offset)
//   ValueError  "<f>: allocation T_data has a negative or too large size"
//   RuntimeError "<f>: workspace allocation of 1024 bytes for T_data failed"
// Symbolic dimensions are bound from the first tensor that has them (in argument order) and
// checked against every later use; constant dimensions are checked.
//
// What is emitted (see the implementation files for details): real LLVM vector types for vector
// dtypes (Ramp with stride 1 -> one vector load/store, other vector indices -> gather/scatter,
// Broadcast -> splat); exp, tanh, erf, sigmoid as inline polynomial code for float32 scalars and
// vectors (so vector loops stay vector), other math as LLVM intrinsics or per-lane libm calls
// (codegen_llvm_math.cc says which); fast-math flags on float
// operations when the target has -fast-math; serial/unrolled loops (unrolled: llvm.loop.unroll
// metadata), leftover vectorized loops as serial; parallel loops outlined into an
// AnvilParallelLambda and run through parallel_launch; Allocate on the stack when small and
// constant (<= 64 KiB), otherwise through workspace_alloc/workspace_free.
//
// Throws ValueError for a target that is not "llvm", NotImplementedError for IR it cannot
// translate (thread-bound loops, handle arithmetic, unsupported dtypes).
#pragma once

#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen {

Module build_llvm(const std::vector<tir::PrimFunc>& funcs, const Target& target);

}  // namespace anvil::codegen
