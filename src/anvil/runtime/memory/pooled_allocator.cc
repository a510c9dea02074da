// PooledAllocator: size-class free lists over a DeviceAPI.
#include "anvil/runtime/memory/pooled_allocator.h"

#include <bit>

#include "anvil/base/error.h"

namespace anvil {

PooledAllocator::~PooledAllocator() { release_unused(); }

size_t PooledAllocator::size_class(size_t nbytes) {
  constexpr size_t kMinClass = 256;
  if (nbytes <= kMinClass) return kMinClass;
  // Round up to a multiple of a quarter of the enclosing power of two.
  size_t high = std::bit_floor(nbytes);
  size_t step = high / 4;
  return (nbytes + step - 1) / step * step;
}

MemoryBlock PooledAllocator::alloc(size_t nbytes, size_t alignment) {
  if (alignment < kAllocAlignment) alignment = kAllocAlignment;
  size_t capacity = size_class(nbytes);
  {
    std::lock_guard lock(mutex_);
    auto it = free_.find(capacity);
    if (it != free_.end()) {
      auto& blocks = it->second;
      for (size_t i = blocks.size(); i-- > 0;) {
        // A cached block serves any request whose alignment it already satisfies.
        if (blocks[i].alignment >= alignment) {
          void* data = blocks[i].data;
          blocks.erase(blocks.begin() + static_cast<std::ptrdiff_t>(i));
          in_use_ += capacity;
          return {data, nbytes, capacity, device_};
        }
      }
    }
  }
  void* data = api_->alloc(device_, capacity, alignment);
  std::lock_guard lock(mutex_);
  held_ += capacity;
  in_use_ += capacity;
  return {data, nbytes, capacity, device_};
}

void PooledAllocator::free(const MemoryBlock& block) {
  if (block.data == nullptr) return;
  ANVIL_ICHECK(block.capacity == size_class(block.nbytes), "block of ", block.nbytes,
               " bytes was not allocated by this pooled allocator");
  // The alignment actually provided is recovered from the address itself.
  size_t alignment = size_t{1} << std::countr_zero(reinterpret_cast<uintptr_t>(block.data));
  std::lock_guard lock(mutex_);
  free_[block.capacity].push_back({block.data, alignment});
  in_use_ -= block.capacity;
}

size_t PooledAllocator::bytes_held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

size_t PooledAllocator::bytes_in_use() const {
  std::lock_guard lock(mutex_);
  return in_use_;
}

void PooledAllocator::release_unused() {
  std::lock_guard lock(mutex_);
  for (auto& [capacity, blocks] : free_) {
    for (const FreeBlock& b : blocks) api_->free(device_, b.data);
    held_ -= capacity * blocks.size();
  }
  free_.clear();
}

}  // namespace anvil
