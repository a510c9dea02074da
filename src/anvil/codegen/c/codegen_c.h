// TIR -> C99: the portable host code generator.
//
//   Module m = build_c({f, g}, Target::parse("c"));    // kind "c" (c_source_module.h)
//   pipeline::export_library(m, "lib.so");              // compiled by the system C compiler
//   Module lib = Module::load_from_file("lib.so");      // run it
//
// Each PrimFunc becomes `int32_t __anvil_fn_<name>(const AnvilValue*, int32_t, AnvilValue*)`
// following the kernel ABI (runtime/c_abi.h): the same argument unpacking, checks and error
// messages as the LLVM back end (see codegen/llvm/codegen_llvm.h for the formats), reported
// through `__anvil_runtime_api->error_set`, then a `static` compute function with `restrict`
// buffer pointers. Functions go through storage_flatten and lower_parallel first. Vector
// expressions are scalarised lane by lane (the C compiler may re-vectorise). Parallel loops are
// outlined into an AnvilParallelLambda with a closure struct and run through parallel_launch,
// statically chunked like the LLVM path. Math uses <math.h> (expf, tanhf, erff, ...); signed
// integer arithmetic wraps (computed in unsigned); FloorDiv/FloorMod floor. Allocate: stack
// arrays for constant sizes up to 64 KiB, workspace_alloc/workspace_free otherwise.
//
// Throws ValueError for a target that is not "c", NotImplementedError for IR it cannot express
// (thread-bound loops, float16, handle arithmetic).
#pragma once

#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen {

Module build_c(const std::vector<tir::PrimFunc>& funcs, const Target& target);

// The C source alone (what build_c puts into its module).
std::string generate_c_source(const std::vector<tir::PrimFunc>& funcs, std::vector<std::string>* names = nullptr);

}  // namespace anvil::codegen
