// Naive and pooled allocators.
#include "anvil/runtime/memory/allocator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "anvil/base/error.h"
#include "anvil/runtime/memory/naive_allocator.h"
#include "anvil/runtime/memory/pooled_allocator.h"

namespace anvil {
namespace {

TEST(Allocator, KindsByName) {
  EXPECT_EQ(allocator_kind_from_name("naive"), AllocatorKind::kNaive);
  EXPECT_EQ(allocator_kind_from_name("pooled"), AllocatorKind::kPooled);
  EXPECT_THROW(allocator_kind_from_name("arena"), Error);
  EXPECT_EQ(get_allocator(Device::cpu(), AllocatorKind::kPooled), get_allocator(Device::cpu(), AllocatorKind::kPooled));
}

TEST(NaiveAllocator, CountsBytesInUse) {
  register_device_apis();
  NaiveAllocator naive(Device::cpu());
  MemoryBlock a = naive.alloc(1000, 64);
  MemoryBlock b = naive.alloc(24, 256);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % 256, 0u);
  EXPECT_EQ(naive.bytes_in_use(), 1024u);
  naive.free(a);
  naive.free(b);
  EXPECT_EQ(naive.bytes_in_use(), 0u);
}

TEST(PooledAllocator, SizeClassesWasteAtMostAQuarter) {
  for (size_t n : {1, 255, 256, 257, 1000, 4096, 5000, 1 << 20, (1 << 20) + 1, 123456789}) {
    size_t c = PooledAllocator::size_class(n);
    EXPECT_GE(c, n);
    if (n > 256) {
      EXPECT_LE(c, n + n / 4 + 1) << n;
    }
  }
}

TEST(PooledAllocator, ReusesFreedBlocksAndReleasesOnDemand) {
  register_device_apis();
  PooledAllocator pool(Device::cpu());
  MemoryBlock a = pool.alloc(1 << 20, 64);
  std::memset(a.data, 1, 1 << 20);
  pool.free(a);
  size_t held = pool.bytes_held();
  EXPECT_GE(held, size_t{1} << 20);
  EXPECT_EQ(pool.bytes_in_use(), 0u);
  // Same size class: the cached block comes back, no new device memory.
  MemoryBlock b = pool.alloc((1 << 20) - 100, 64);
  EXPECT_EQ(b.data, a.data);
  EXPECT_EQ(pool.bytes_held(), held);
  pool.free(b);
  // Held bytes stay flat over many alloc/free cycles.
  for (int i = 0; i < 1000; ++i) pool.free(pool.alloc(1 << 20, 64));
  EXPECT_EQ(pool.bytes_held(), held);
  pool.release_unused();
  EXPECT_EQ(pool.bytes_held(), 0u);
}

TEST(PooledAllocator, HonoursLargerAlignment) {
  register_device_apis();
  PooledAllocator pool(Device::cpu());
  for (size_t align : {64, 128, 4096}) {
    MemoryBlock b = pool.alloc(3000, align);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data) % align, 0u) << align;
    pool.free(b);
  }
}

TEST(PooledAllocator, IsThreadSafe) {
  register_device_apis();
  PooledAllocator pool(Device::cpu());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        MemoryBlock b = pool.alloc(static_cast<size_t>(1024 * (1 + (i + t) % 7)), 64);
        static_cast<char*>(b.data)[0] = static_cast<char>(i);
        pool.free(b);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(pool.bytes_in_use(), 0u);
}

}  // namespace
}  // namespace anvil
