// NaiveAllocator: a thin counting wrapper over DeviceAPI::alloc/free.
#include "anvil/runtime/memory/naive_allocator.h"

namespace anvil {

MemoryBlock NaiveAllocator::alloc(size_t nbytes, size_t alignment) {
  void* data = api_->alloc(device_, nbytes, alignment);
  in_use_.fetch_add(nbytes, std::memory_order_relaxed);
  return {data, nbytes, nbytes, device_};
}

void NaiveAllocator::free(const MemoryBlock& block) {
  api_->free(device_, block.data);
  in_use_.fetch_sub(block.nbytes, std::memory_order_relaxed);
}

}  // namespace anvil
