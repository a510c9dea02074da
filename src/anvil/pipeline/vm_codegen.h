// vm_codegen: a lowered graph module (lower_graph.h: only call_tir and VM-evaluated operators
// left) -> a VM Executable written through vm::ExecBuilder. Each graph function becomes a VM
// function of the same name; for "main" the parameter names are the module's "input_names"
// (the ONNX input names) when present, else the parameters' own names.
//
// The program of a function, in order:
//   * checks of every tensor parameter (vm.builtin.check_tensor_info: rank, dtype, CPU), with
//     errors naming the input: "main: input 'x': expected dtype float32 but got int64 ...";
//   * when a symbolic dimension occurs: a shape heap (alloc_shape_heap) with one slot per Var,
//     filled from the parameters' shapes (match_shape stores a Var where it first appears and
//     checks every later and every constant dimension), then one slot per derived value the
//     program needs (n * 2, allocation sizes: shape_compute), then the parameter dimensions
//     that are expressions (n * 2) checked against those slots;
//   * per binding: call_tir -> outputs allocated (alloc_storage + alloc_tensor; shapes are
//     constants, or make_shape from the heap) and the kernel called with (args..., outputs...,
//     shape var values) — directly when it takes no shape vars, else through
//     vm.builtin.call_tir_dyn with a Shape of the values; reshape / squeeze / expand_dims ->
//     vm.builtin.reshape (a view); shape_of -> the shape of the argument's type (a constant or
//     make_shape); shape_to_tensor of a static shape -> a constant; Tuple -> make_tuple,
//     TupleGetItem -> tuple_getitem; constants go to the constant pool;
//   * ret of the result (a tensor, or a tuple as an array).
//
// Memory: with plan_memory, outputs live in the storages the liveness plan of memory_plan.h
// chose (reuse after the last use, through views and tuples; returned values never reused;
// symbolic sizes reuse within their size class, storage sizes computed in the heap). Without
// plan_memory: one exact storage per output, symbolic ones freed after their last use.
//
// The plan is kept in the executable as the VM function "__anvil_memory_plan" returning its
// JSON (read_memory_plan); the model's description (inputs, outputs with symbolic dims, kernels,
// memory, target) as "__anvil_model_info" (model_info.h), which `anvil run` / `anvil inspect` read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/graph/function.h"
#include "anvil/pipeline/memory_plan.h"
#include "anvil/runtime/vm/executable.h"

namespace anvil::pipeline {

struct VmCodegenOptions {
  bool plan_memory = true;
  int64_t device_type = 1;  // kDLCPU: the device parameters must be on (-1: not checked)
  std::string target;       // for the model info (model_info.h); "" leaves it out
};

struct VmCodegenResult {
  vm::Executable exec;
  MemoryPlan memory_plan;  // of "main" (summed over functions when there are several)
};

// ValueError for a call of an operator that was not lowered, a symbolic dimension no parameter
// binds, or "input_names" of the wrong length; NotImplementedError for what the VM cannot do
// yet (a tuple parameter, shape_to_tensor of a symbolic shape, a dimension expression outside
// + - * // % min max).
VmCodegenResult vm_codegen(const graph::IRModule& mod, const VmCodegenOptions& options = {});

inline constexpr const char* kMemoryPlanFunction = "__anvil_memory_plan";
// The plan stored in an executable (also one loaded from a library); nullopt when it has none.
std::optional<MemoryPlan> read_memory_plan(const vm::Executable& exec);

// With the module attribute "output_names", the executable has a VM function returning them
// (a tuple of strings); read_output_names reads them without running it (nullopt: none stored).
// Input names are main's parameter names (FuncInfo::param_names).
inline constexpr const char* kOutputNamesFunction = "__anvil_output_names";
std::optional<std::vector<std::string>> read_output_names(const vm::Executable& exec);

}  // namespace anvil::pipeline
