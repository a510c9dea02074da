// export_library: turns a module tree into one shared library — host code compiled by the system
// C compiler, plus the blob (runtime/module/blob.h) carrying every other module — that
// Module::load_from_file (or anvil.runtime.load_module) loads back.
#pragma once

#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"

namespace anvil::pipeline {

struct ExportOptions {
  std::string compiler = "cc";           // the C compiler driver; $CC overrides the default
  std::vector<std::string> extra_flags;  // appended to the compile/link command
  bool keep_temp_dir = false;            // leave the generated sources for inspection
};

// Throws ValueError if the tree has no host code or holds a module that cannot be packed,
// RuntimeError (with the compiler's output) if compilation fails.
void export_library(const Module& root, const std::string& path, const ExportOptions& options = {});

// The C source defining the blob symbols (also used by tests).
std::string blob_to_c_source(const std::string& blob);

}  // namespace anvil::pipeline
