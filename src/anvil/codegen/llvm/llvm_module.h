// The runtime module kind "llvm": host code held as an optimised llvm::Module for one target.
//   mod["name"](args...)  JIT-compiles on first use (host targets only) and calls
//                         `__anvil_fn_<name>` through the same wrapper as a loaded library;
//   export_library        links its object file into a shared library;
//   llvm_module_source    gives the IR ("ll") or assembly ("asm"/"s") text.
// The machine code is generated once (emit_object) and the JIT links that same object, so what
// runs in-process is byte for byte what gets exported.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace anvil::codegen {

inline constexpr const char* kLLVMModuleKind = "llvm";

// Takes the module and the context that owns it; resolves `target` (kind "llvm"), prepares the
// module for it (triple, data layout, function attributes), verifies it (InternalError on
// invalid IR) and runs the optimisation pipeline. ValueError for a bad target. Functions are the
// module's definitions named `__anvil_fn_<name>` (see kernel_abi.h).
Module make_llvm_module(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                        const Target& target);

bool is_llvm_module(const Module& m);
// The rest take a module of kind "llvm" (ValueError otherwise).
const Target& llvm_module_target(const Module& m);
// "ll": optimised IR; "asm" or "s": assembly. ValueError for other formats.
std::string llvm_module_source(const Module& m, std::string_view format);
// The relocatable object (bytes), generated once and cached.
const std::string& llvm_module_object(const Module& m);
// The kernel names (without the `__anvil_fn_` prefix), in definition order.
const std::vector<std::string>& llvm_module_function_names(const Module& m);

}  // namespace anvil::codegen
