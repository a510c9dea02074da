// Static memory planning of a lowered graph function: which storage each kernel output lives
// in, from a liveness analysis over the bindings. vm_codegen emits the plan; `anvil inspect`
// prints its summary (MemoryPlan).
//
// Every output of a top-level call_tir binding is a token; a token is live from its binding to
// the last binding that uses any value aliasing it (the var itself, a reshape view of it, a
// tuple holding it, a tuple_getitem of that tuple), and forever when the function's result
// reaches it. Sizes are factor * (product of the symbolic dims); tokens whose symbolic dims are
// structurally equal form a size class (static sizes: the class of no dims), where sizes
// compare by factor since dims are >= 0 — so (n, 64, 56, 56) and (n, 128, 28, 28) share storage.
// Tokens are placed in binding order: a storage of the token's class whose tokens are all dead
// before this binding is free; the smallest free one that fits is reused, else the largest free
// one grows to fit (it is allocated once, with its final size: symbolic ones computed in the
// shape heap), else a new storage. Without reuse, symbolic-size tokens are allocated on their
// own and the registers of the binding vars holding them are cleared after their last use
// (StoragePlan::kills), so the VM's pooled allocator recycles them.
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
  int64_t num_dynamic_tensors = 0;  // symbolic-size outputs
  int64_t num_symbolic_storages = 0;  // the storages planned for them (0 without reuse)
  // Their sizes with every symbolic dimension variable set to 1 (batch 1, ...):
  int64_t symbolic_planned_bytes_at_1 = 0;    // sum of the symbolic storages
  int64_t symbolic_unplanned_bytes_at_1 = 0;  // sum of the symbolic-size outputs

  MemoryPlan& operator+=(const MemoryPlan& o);
  // {"planned_bytes": N, "unplanned_bytes": N, "storages": N, "static_tensors": N, "dynamic_tensors": N,
  //  "symbolic_storages": N, "symbolic_planned_bytes_at_1": N, "symbolic_unplanned_bytes_at_1": N}
  std::string to_json() const;
  // "1.50 MiB in 3 storages for 10 static tensors (5.25 MiB without reuse); 4 symbolic-size
  // tensors in 2 storages: 2.00 KiB with every symbolic dim 1 (4.00 KiB without reuse)"
  std::string to_string() const;
  // Parses to_json() output; nullopt when a field is missing or malformed.
  static std::optional<MemoryPlan> from_json(const std::string& text);
};

struct StoragePlan {
  static constexpr int kDynamic = -1;
  // Per binding: for each output of its call_tir (one, or one per tuple field) the storage
  // index, or kDynamic (allocated on its own: symbolic size without reuse, or unknown rank);
  // empty for bindings that are not call_tir.
  std::vector<std::vector<int>> output_storage;
  // Final size of each storage: storage_bytes[s] times the product of storage_sym[s] (the
  // symbolic dimensions of its size class; empty for a static size).
  std::vector<int64_t> storage_bytes;
  std::vector<std::vector<ir::PrimExpr>> storage_sym;
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
