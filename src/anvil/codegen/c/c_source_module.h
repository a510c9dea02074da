// CSourceModule (kind "c"): host code as C99 source following the kernel ABI (runtime/c_abi.h).
// It is not runnable by itself; export_library compiles it into the shared library's host code.
// The C code generator (a later stage) produces these; tests and the demo write them by hand.
#pragma once

#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"

namespace anvil::codegen {

// `function_names`: the kernels the source defines (as `__anvil_fn_<name>`), for listing.
Module make_c_source_module(std::string source, std::vector<std::string> function_names);

// True for modules whose code becomes the shared library itself: kinds "c" and "llvm".
bool is_host_code_module(const Module& m);

// The source text of a "c" module; ValueError for other kinds.
const std::string& c_source_of(const Module& m);
// The kernel names a "c" module declared.
const std::vector<std::string>& c_function_names_of(const Module& m);

}  // namespace anvil::codegen
