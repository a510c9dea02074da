// The source text of a host-code module (TVM's Module.get_source), and the compiler's global
// function that exposes it by name: "runtime.ModuleGetSource" (module, format) -> str, as in TVM,
// so C++, Python (anvil.runtime.Module.get_source) and anything holding the registry reach the
// same code. The runtime cannot register it itself: the module kinds with source ("llvm", "c")
// are compiler code.
#pragma once

#include <string>
#include <string_view>

#include "anvil/runtime/module/module.h"

namespace anvil::codegen {

// Kind "llvm": "ll" (LLVM IR, also for "") or "asm" / "s" (assembly); kind "c": its C source
// ("" or "c"). ValueError for another format or a module kind without source text. The reader
// of each module kind is its code generator's row in codegen_registry.h.
std::string module_source(const Module& m, std::string_view format);

// Registers the compiler's global functions ("runtime.ModuleGetSource"). Idempotent; called by
// whoever loads the compiler (the Python extension, tests), never from a static initialiser.
void register_codegen_functions();

}  // namespace anvil::codegen
