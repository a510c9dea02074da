// The code generator table (see codegen_registry.h).
#include "anvil/codegen/codegen_registry.h"

#include "anvil/base/error.h"
#include "anvil/codegen/c/c_source_module.h"
#include "anvil/codegen/c/codegen_c.h"
#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/codegen/spirv/codegen_spirv.h"

namespace anvil::codegen {
namespace {

std::string llvm_source(const Module& m, std::string_view format) {
  return llvm_module_source(m, format.empty() ? "ll" : format);
}

std::string c_source(const Module& m, std::string_view format) {
  if (!format.empty() && format != "c")
    value_error("get_source: a module of kind 'c' has C source only, not '", format, "'");
  return c_source_of(m);
}

// One row per target kind with a code generator. Device back ends add theirs here.
constexpr CodegenEntry kCodegens[] = {
    {TargetKind::kLLVM, "LLVM CPU code generator (codegen/llvm)", "llvm", &build_llvm, &llvm_source},
    {TargetKind::kC, "C source code generator (codegen/c)", "c", &build_c, &c_source},
    {TargetKind::kVulkan, "SPIR-V code generator for Vulkan (codegen/spirv)", "vulkan", &build_vulkan, &vulkan_source},
};

}  // namespace

std::span<const CodegenEntry> codegen_entries() { return kCodegens; }

const CodegenEntry* find_codegen(TargetKind kind) {
  for (const auto& e : kCodegens)
    if (e.target_kind == kind) return &e;
  return nullptr;
}

const CodegenEntry* find_codegen_for_module(std::string_view module_kind) {
  for (const auto& e : kCodegens)
    if (e.module_kind == module_kind) return &e;
  return nullptr;
}

Module build_for_target(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  const CodegenEntry* entry = find_codegen(target.kind());
  if (entry == nullptr) {
    std::string names, kinds;
    for (const auto& f : funcs) names += (names.empty() ? "" : ", ") + f->str_attr(tir::attr::kGlobalSymbol).value_or("main");
    for (const auto& e : kCodegens) kinds += (kinds.empty() ? "'" : ", '") + std::string(Target(e.target_kind).kind_name()) + "'";
    not_implemented_error("build: no code generator for target kind '", target.kind_name(), "' yet (target '",
                          target.str(), "'", names.empty() ? "" : ", functions: ", names, "; kinds with one: ", kinds,
                          ")");
  }
  return entry->build(funcs, target);
}

}  // namespace anvil::codegen
