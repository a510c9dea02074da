// Static memory planning of a lowered graph function: which storage each kernel output lives
// in, from a liveness analysis over the bindings. vm_codegen emits the plan; `anvil inspect`
// prints its summary (MemoryPlan).
//
// Every output of a top-level call_tir binding is a token; a token is live from its binding to
// the last binding that uses any value aliasing it (the var itself, a reshape view of it, a
// tuple holding it, a tuple_getitem of that tuple), and forever when the function's result
// reaches it. Tokens of static size are placed in binding order: a storage whose tokens are all
// dead before this binding is free; the smallest free storage that fits is reused, else the
// largest free one grows to fit (its size is final only at the end: it is allocated with its
// final size), else a new storage. Tokens of symbolic size are not planned (the VM allocates
// them, its pooled allocator recycles their blocks) and the registers of the binding vars that
// hold them are cleared after their last use (StoragePlan::kills).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "anvil/graph/function.h"

namespace anvil::pipeline {

struct MemoryPlan {
  int64_t planned_bytes = 0;        // sum of the planned storages: the static peak with reuse
  int64_t unplanned_bytes = 0;      // sum of every static-size output: the peak without reuse
  int64_t num_storages = 0;         // planned storages
  int64_t num_static_tensors = 0;   // static-size outputs placed by the plan
  int64_t num_dynamic_tensors = 0;  // symbolic-size outputs, allocated as they come

  MemoryPlan& operator+=(const MemoryPlan& o);
  // {"planned_bytes": N, "unplanned_bytes": N, "storages": N, "static_tensors": N, "dynamic_tensors": N}
  std::string to_json() const;
  // "1.50 MiB in 3 storages for 10 static tensors (5.25 MiB without reuse), 2 dynamic tensors"
  std::string to_string() const;
  // Parses to_json() output; nullopt when a field is missing or malformed.
  static std::optional<MemoryPlan> from_json(const std::string& text);
};

struct StoragePlan {
  static constexpr int kDynamic = -1;
  // Per binding: for each output of its call_tir (one, or one per tuple field) the storage
  // index, or kDynamic (symbolic size); empty for bindings that are not call_tir.
  std::vector<std::vector<int>> output_storage;
  std::vector<int64_t> storage_bytes;      // final size of each storage
  std::vector<ir::DataType> storage_dtype;  // of its first tensor (the allocation's alignment hint)
  // Per binding i: the bindings whose var registers may be cleared after binding i.
  std::vector<std::vector<int>> kills;
  MemoryPlan summary;
};

// reuse = false: one storage of the exact size per static output (the unplanned baseline).
StoragePlan plan_storage(const graph::Function& f, bool reuse = true);

// Bytes of a tensor type of static shape; nullopt for a symbolic one.
std::optional<int64_t> static_nbytes(const graph::Type& t);

}  // namespace anvil::pipeline
