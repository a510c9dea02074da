// compile: a graph IRModule -> a runnable VM Executable whose kernels it imports — the whole
// order of the graph compiler on one page (compile.cc). Then:
//
//   vm::Executable exe = pipeline::compile(mod, Target::parse("llvm"));
//   vm::VirtualMachine vm = vm::VirtualMachine::create(exe.as_module());
//   Value out = vm["main"](x);                               // in process, kernels JIT-compiled
//   pipeline::export_library(exe.as_module(), "model.so");  // ONE file: host code + blob
//   Module m = Module::load_from_file("model.so");            // anywhere the runtime runs
//   vm::VirtualMachine::create(m)["main"](x);
//
// The executable's import is the kernel module (one module of the target's code generator,
// kernels named as the call_tir "func" attributes); VirtualMachine::create resolves kernel
// names through the imports, export_library packs the tree into one library whose root, once
// loaded, is the executable again.
#pragma once

#include <functional>
#include <string>

#include "anvil/graph/function.h"
#include "anvil/pipeline/memory_plan.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/vm/executable.h"
#include "anvil/target/target.h"

namespace anvil::pipeline {

struct CompileOptions {
  // 0: no graph passes, no memory planning (one storage per output); >= 1: fold_constant and
  // dead-code elimination, storage reuse.
  int opt_level = 2;
  // When set: the IR after each stage is written there (lowered TIR per kernel, VM listing,
  // memory plan), for `anvil compile --dump-ir DIR`.
  std::string dump_ir_dir;
  // Called after each stage, or each unit of one: (stage, done, total, seconds of that unit):
  // ("fold_constant", 1, 1, ...), ("dead_code_elimination", 1, 1, ...),
  // ("lower_graph", 1, 1, 0.02), ("tir", 1, 12, 0.001) ... ("tir", 12, 12, ...) for the TIR
  // passes per kernel, ("codegen", 1, 1, 1.8) for the target's code generator on all kernels
  // (where the time goes: LLVM), ("vm_codegen", 1, 1, 0.001).
  std::function<void(const std::string& stage, int done, int total, double seconds)> progress;
};

// ValueError / NotImplementedError of the stages pass through (an operator without an
// implementation, a symbolic dimension no input binds, ...).
vm::Executable compile(const graph::IRModule& mod, const Target& target, const CompileOptions& options = {});

// compile(...).as_module(): what export_library and VirtualMachine::create take.
Module compile_to_module(const graph::IRModule& mod, const Target& target, const CompileOptions& options = {});

}  // namespace anvil::pipeline
