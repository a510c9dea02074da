// Allocators that sit between tensors and a DeviceAPI. `naive` goes straight to the device on
// every call; `pooled` keeps freed blocks in size classes and hands them out again, which is what
// a VM running the same model repeatedly wants. One allocator per (device, kind) per process.
#pragma once

#include <cstddef>
#include <string_view>

#include "anvil/runtime/device.h"
#include "anvil/runtime/device_api.h"

namespace anvil {

enum class AllocatorKind { kNaive, kPooled };

std::string_view allocator_kind_name(AllocatorKind kind);
AllocatorKind allocator_kind_from_name(std::string_view name);  // "naive" | "pooled"; ValueError otherwise

struct MemoryBlock {
  void* data = nullptr;
  size_t nbytes = 0;    // what the caller asked for
  size_t capacity = 0;  // what the block really holds (>= nbytes)
  Device device;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual AllocatorKind kind() const = 0;
  virtual Device device() const = 0;
  // alignment: a power of two; at least kAllocAlignment is always given.
  virtual MemoryBlock alloc(size_t nbytes, size_t alignment = kAllocAlignment) = 0;
  virtual void free(const MemoryBlock& block) = 0;
  // Bytes obtained from the device and not yet returned to it (in use + cached).
  virtual size_t bytes_held() const = 0;
  // Bytes handed out and not yet freed.
  virtual size_t bytes_in_use() const = 0;
  // Returns cached, unused blocks to the device. No-op for naive.
  virtual void release_unused() = 0;
};

// The process-wide allocator for a device and kind; lives until exit.
Allocator* get_allocator(Device device, AllocatorKind kind);

}  // namespace anvil
