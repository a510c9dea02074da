// Allocator kinds and the process-wide allocator table.
#include "anvil/runtime/memory/allocator.h"

#include <map>
#include <memory>
#include <mutex>

#include "anvil/base/error.h"
#include "anvil/runtime/memory/naive_allocator.h"
#include "anvil/runtime/memory/pooled_allocator.h"

namespace anvil {

std::string_view allocator_kind_name(AllocatorKind kind) {
  return kind == AllocatorKind::kNaive ? "naive" : "pooled";
}

AllocatorKind allocator_kind_from_name(std::string_view name) {
  if (name == "naive") return AllocatorKind::kNaive;
  if (name == "pooled") return AllocatorKind::kPooled;
  value_error("unknown allocator '", name, "': expected 'naive' or 'pooled'");
}

Allocator* get_allocator(Device device, AllocatorKind kind) {
  // Never destroyed: tensors freed during static destruction may still return memory here.
  static auto* mutex = new std::mutex();
  static auto* table = new std::map<std::tuple<int, int, int>, std::unique_ptr<Allocator>>();
  std::lock_guard lock(*mutex);
  auto key = std::make_tuple(static_cast<int>(device.type), device.id, static_cast<int>(kind));
  auto& slot = (*table)[key];
  if (!slot) {
    if (kind == AllocatorKind::kNaive)
      slot = std::make_unique<NaiveAllocator>(device);
    else
      slot = std::make_unique<PooledAllocator>(device);
  }
  return slot.get();
}

}  // namespace anvil
