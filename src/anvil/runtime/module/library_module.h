// LibraryModule: a kernel library opened with dlopen. Functions are the exported symbols
// `__anvil_fn_<name>` (AnvilKernelFn); the loader fills `__anvil_runtime_api`, checks
// `__anvil_abi_version`, reads the optional name table `__anvil_function_names` and unpacks the
// embedded blob `__anvil_library_blob` (+ `__anvil_library_blob_size`).
#pragma once

#include <string>

#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module/module.h"

namespace anvil {

inline constexpr const char* kKernelSymbolPrefix = "__anvil_fn_";
inline constexpr const char* kRuntimeApiSymbol = "__anvil_runtime_api";
inline constexpr const char* kAbiVersionSymbol = "__anvil_abi_version";
inline constexpr const char* kFunctionNamesSymbol = "__anvil_function_names";
inline constexpr const char* kBlobSymbol = "__anvil_library_blob";
inline constexpr const char* kBlobSizeSymbol = "__anvil_library_blob_size";
inline constexpr const char* kLibraryModuleKind = "library";

// Opens the library and returns the root of its module tree (see Module::load_from_file).
Module load_library_module(const std::string& path);

// Wraps a kernel entry point as the Function `name`: arguments become AnvilValue cells, a
// non-zero status becomes an Error "kernel '<name>' failed: <message>" of the kind the kernel
// set. `owner` (the module whose code holds the kernel) is kept alive by the Function. Used for
// dlopen'ed libraries and for JIT-compiled code alike.
Function make_kernel_function(AnvilKernelFn kernel, const std::string& name, Ref<Object> owner);

}  // namespace anvil
