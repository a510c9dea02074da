// The code generators, one row per target kind: the only place that says which function turns
// a list of PrimFuncs into a runtime Module for a kind, which module kind it makes and how that
// module's source text is read. pipeline::build and module_source (get_source) look rows up
// here; a new back end (CUDA, OpenCL; SPIR-V for "vulkan" has its row) adds its row to the table in
// codegen_registry.cc and nothing else.
//
//   const CodegenEntry* e = find_codegen(TargetKind::kLLVM);   // nullptr: no generator yet
//   Module m = e->build(funcs, target);                        // kind e->module_kind
//   Module m = build_for_target(funcs, target);                // same; NotImplementedError if none
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen {

// Functions that went through pipeline::run_tir_pipeline, all for `target` (of the row's kind).
using BuildFunc = Module (*)(const std::vector<tir::PrimFunc>& funcs, const Target& target);
// The module's code as text in `format` ("" = the default one); ValueError for other formats.
using SourceFunc = std::string (*)(const Module& module, std::string_view format);

struct CodegenEntry {
  TargetKind target_kind;
  std::string_view name;         // what it is, for messages and docs
  std::string_view module_kind;  // Module::kind() of what build returns
  BuildFunc build;
  SourceFunc source;  // nullptr: the module kind has no source text
};

// All rows, in table order.
std::span<const CodegenEntry> codegen_entries();
// The row of a target kind / of a module kind, or nullptr.
const CodegenEntry* find_codegen(TargetKind kind);
const CodegenEntry* find_codegen_for_module(std::string_view module_kind);

// The row's generator on funcs; NotImplementedError "no code generator for target kind 'cuda'
// yet" (naming the functions and the kinds that have one) when the kind has no row.
Module build_for_target(const std::vector<tir::PrimFunc>& funcs, const Target& target);

}  // namespace anvil::codegen
