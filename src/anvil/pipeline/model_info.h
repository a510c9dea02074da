// The description a compiled model carries about itself: vm_codegen stores it in the executable
// as the VM function "__anvil_model_info" returning this JSON, which `anvil run` and
// `anvil inspect` read (tools/model_info.h) on any machine with the runtime:
//   {"inputs": [{"name": "x", "dtype": "float32", "shape": ["n", 3, 224, 224]}],
//    "outputs": [...], "kernels": [{"name": ..., "op": ..., "implementation": ...}],
//    "memory": {"peak_bytes": N, "storages": N, "static_storages": N, "planned_bytes": N, ...the
//               other MemoryPlan fields}, "target": "llvm ..."}
// Symbolic dims are strings (the tensor IR's text: "n", "n * 2"); a tensor of unknown rank has
// no "shape". peak_bytes: the planned storages, symbolic ones with every symbolic dim 1.
#pragma once

#include <string>

#include "anvil/graph/function.h"
#include "anvil/pipeline/memory_plan.h"

namespace anvil::pipeline {

inline constexpr const char* kModelInfoFunction = "__anvil_model_info";

// `mod` after lower_graph (kernels are its call_tir calls); target: "" when unknown (omitted).
std::string model_info_json(const graph::IRModule& mod, const MemoryPlan& plan, const std::string& target);

// A JSON string literal of s (quotes, backslashes and control characters escaped).
std::string json_quote(const std::string& s);

}  // namespace anvil::pipeline
