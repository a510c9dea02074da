// NaiveAllocator: every alloc and free goes straight to the DeviceAPI.
#pragma once

#include <atomic>

#include "anvil/runtime/memory/allocator.h"

namespace anvil {

class NaiveAllocator final : public Allocator {
 public:
  explicit NaiveAllocator(Device device) : device_(device), api_(DeviceAPI::get(device)) {}
  AllocatorKind kind() const override { return AllocatorKind::kNaive; }
  Device device() const override { return device_; }
  MemoryBlock alloc(size_t nbytes, size_t alignment) override;
  void free(const MemoryBlock& block) override;
  size_t bytes_held() const override { return in_use_.load(std::memory_order_relaxed); }
  size_t bytes_in_use() const override { return in_use_.load(std::memory_order_relaxed); }
  void release_unused() override {}

 private:
  Device device_;
  DeviceAPI* api_;
  std::atomic<size_t> in_use_{0};
};

}  // namespace anvil
