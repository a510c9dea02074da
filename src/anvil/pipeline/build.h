// build: the compiler entry points for tensor-expression kernels — lower a schedule to a
// PrimFunc through the standard TIR pass order, and build PrimFuncs into a runtime Module.
//
//   te::Schedule s = te::create_schedule({C});
//   tir::PrimFunc f = pipeline::lower(s, {A, B, C}, "matmul");     // print it: tir::to_string(f)
//   Module m = pipeline::build(s, {A, B, C}, Target::parse("llvm"), "matmul");
//   m["matmul"](a, b, c);                                          // or export_library(m, "k.so")
//
// Scalar parameters: list Vars among the tensors (te::LowerArg), called with ints/floats:
//   Var alpha("alpha", DataType::float32());
//   Module m = pipeline::build(s, {A, alpha, B}, Target::parse("llvm"), "scale");
//   m["scale"](a, 2.5, b);
//
// The pass order lives in one function, run_tir_pipeline (build.cc): reading it tells what
// happens to a kernel between te::lower and the code generator. Debug switch: the environment
// variable ANVIL_DUMP_IR=1 (or BuildOptions::dump_ir) prints the function after every stage to
// stderr; debug builds (and BuildOptions::verify) check well-formedness after every stage.
//
// Targets: each function is built for its "target" attribute (kTargetAttr) if it has
// one, else for the build's target; the functions are grouped per target and each group goes to
// the code generator of its kind (codegen/codegen_registry.h): "llvm" (codegen/llvm, a
// JIT-runnable module of kind "llvm"), "c" (codegen/c, a module of kind "c", C source that
// export_library compiles). A device target (`vulkan -host=llvm`) sends the functions marked for
// its host to the host's generator; its own kernels fail with NotImplementedError "no code
// generator for target kind 'vulkan' yet" until that back end's row exists. With several groups
// the host's module imports the device modules. Errors of the stages pass through unchanged (ValueError for illegal schedules and
// bad arguments of lower, NotImplementedError for IR a code generator cannot translate).
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"
#include "anvil/te/lower.h"
#include "anvil/te/schedule.h"
#include "anvil/tir/prim_func.h"

namespace anvil::pipeline {

// The PrimFunc attribute (StringImm, target text) naming the target a function is built for
// (TVM's "target" attribute); without it, the build's target.
inline constexpr std::string_view kTargetAttr = "target";

struct BuildOptions {
  bool dump_ir = false;  // print every stage to stderr (also: ANVIL_DUMP_IR set and not "0")
  bool verify = false;   // well-formedness check after every stage (always on in debug builds)
  // Vectorized loops become vector code (tir::passes::vectorize). build() turns this off for
  // device kernels: the GPU back ends take no vector types and run such a loop serially within
  // each invocation.
  bool vectorize = true;
};

// The standard TIR passes, in order, on one function (te::lower's output or a hand-written one).
tir::PrimFunc run_tir_pipeline(const tir::PrimFunc& f, const BuildOptions& options = {});

// te::lower(schedule, args, name), then run_tir_pipeline. args: tensors and scalar Vars in
// parameter order (see te/lower.h); the overloads keep braced lists and std::vector<Tensor> working.
tir::PrimFunc lower(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const std::string& name = "main",
                    const BuildOptions& options = {});
tir::PrimFunc lower(const te::Schedule& schedule, const std::vector<te::Tensor>& args, const std::string& name = "main",
                    const BuildOptions& options = {});
inline tir::PrimFunc lower(const te::Schedule& schedule, std::initializer_list<te::LowerArg> args,
                           const std::string& name = "main", const BuildOptions& options = {}) {
  return lower(schedule, std::vector<te::LowerArg>(args), name, options);
}

// Runs run_tir_pipeline on each function (harmless on functions that went through it already),
// then the target's code generator. The functions' names ("global_symbol") must differ.
Module build(const std::vector<tir::PrimFunc>& funcs, const Target& target, const BuildOptions& options = {});

// lower, then build of the one function.
Module build(const te::Schedule& schedule, const std::vector<te::LowerArg>& args, const Target& target,
             const std::string& name = "main", const BuildOptions& options = {});
Module build(const te::Schedule& schedule, const std::vector<te::Tensor>& args, const Target& target,
             const std::string& name = "main", const BuildOptions& options = {});
inline Module build(const te::Schedule& schedule, std::initializer_list<te::LowerArg> args, const Target& target,
                    const std::string& name = "main", const BuildOptions& options = {}) {
  return build(schedule, std::vector<te::LowerArg>(args), target, name, options);
}

}  // namespace anvil::pipeline
