// PooledAllocator: keeps freed blocks in size classes (four per power of two, so at most 25 %
// slack) and reuses them; release_unused() gives the cache back to the device. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <vector>

#include "anvil/runtime/memory/allocator.h"

namespace anvil {

class PooledAllocator final : public Allocator {
 public:
  explicit PooledAllocator(Device device) : device_(device), api_(DeviceAPI::get(device)) {}
  ~PooledAllocator() override;
  AllocatorKind kind() const override { return AllocatorKind::kPooled; }
  Device device() const override { return device_; }
  MemoryBlock alloc(size_t nbytes, size_t alignment) override;
  void free(const MemoryBlock& block) override;
  size_t bytes_held() const override;
  size_t bytes_in_use() const override;
  void release_unused() override;

  // The capacity a request of nbytes is rounded up to (exposed for tests).
  static size_t size_class(size_t nbytes);

 private:
  struct FreeBlock {
    void* data;
    size_t alignment;
  };
  Device device_;
  DeviceAPI* api_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<FreeBlock>> free_;  // capacity -> cached blocks
  size_t held_ = 0;
  size_t in_use_ = 0;
};

}  // namespace anvil
