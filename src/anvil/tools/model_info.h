// What a compiled model says about itself: the JSON that pipeline::compile stores in the
// executable as the VM function "__anvil_model_info" (returns a string), read by `anvil run` and
// `anvil inspect` on any machine with the runtime:
//   {"inputs": [{"name": "x", "dtype": "float32", "shape": ["n", 3, 224, 224]}],
//    "outputs": [...], "kernels": [{"name": ..., "op": ..., "implementation": ...}],
//    "memory": {"peak_bytes": N, "storages": N}, "target": "llvm ..."}
// Symbolic dims are strings; libraries without the function (hand-built) have only the names
// of main's parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::tools {

struct TensorInfo {
  std::string name;
  std::string dtype;                    // empty when unknown
  std::vector<std::string> dims;        // "3", "n"; empty with has_shape = false when unknown
  bool has_shape = false;
};

struct ModelInfo {
  std::vector<TensorInfo> inputs, outputs;
  std::string json;  // the raw text ("" when the library has none)
};

ModelInfo read_model_info(vm::VirtualMachine& vm);
// The JSON text of __anvil_model_info (ValueError when it is not JSON).
ModelInfo parse_model_info(const std::string& json);

// The shape to feed for an input: its dims, symbolic ones from `pinned` (by dim name) or 1.
// Returns the names of symbolic dims that defaulted to 1 in *defaulted.
std::vector<int64_t> concrete_shape(const TensorInfo& info, const std::vector<int64_t>* pinned,
                                    std::vector<std::string>* defaulted);

}  // namespace anvil::tools
