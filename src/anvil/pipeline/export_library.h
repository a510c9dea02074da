// export_library: turns a module tree into one shared library — host code compiled by the system
// C compiler, plus the blob (runtime/module/blob.h) carrying every other module, assembled from
// its bytes with .incbin (no C array: 100 MB of weights add about a second) — that
// Module::load_from_file (or anvil.runtime.load_module) loads back.
#pragma once

#include <cstdint>
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

// The assembler source defining the blob symbols (docs/abi.md): __anvil_library_blob, 64-byte
// aligned in .rodata, holds the bytes of blob_file (through .incbin), and
// __anvil_library_blob_size = blob_size. The same `cc` driver assembles it for the export's
// target. Also used by tests to build libraries with corrupt blobs.
std::string blob_assembly_source(const std::string& blob_file, uint64_t blob_size);

}  // namespace anvil::pipeline
