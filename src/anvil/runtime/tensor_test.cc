// Tensors: allocation, views, copies (strided and compact) and DLPack exchange.
#include "anvil/runtime/tensor.h"

#include <gtest/gtest.h>

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/test_util.h"

namespace anvil {
namespace {

using testing::random_float_tensor;

TEST(Tensor, EmptyAllocatesAlignedCompactMemory) {
  for (DataType dt : {DataType::boolean(), DataType::int8(), DataType::uint16(), DataType::int32(),
                      DataType::uint64(), DataType::float16(), DataType::bfloat16(), DataType::float64()}) {
    Tensor t = Tensor::empty({3, 5, 7}, dt);
    EXPECT_EQ(t.ndim(), 3);
    EXPECT_EQ(t.numel(), 105);
    EXPECT_EQ(t.nbytes(), 105 * dt.bytes());
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % kAllocAlignment, 0u);
    EXPECT_EQ(t.strides(), (std::vector<int64_t>{35, 7, 1}));
    EXPECT_EQ(t.dl()->strides, nullptr);
  }
  EXPECT_EQ(Tensor::empty({0, 4}, DataType::float32()).numel(), 0);
  EXPECT_EQ(Tensor::empty({}, DataType::float32()).numel(), 1);  // a scalar
}

TEST(Tensor, RejectsBadShapesAndTypes) {
  EXPECT_THROW(Tensor::empty({2, -1}, DataType::float32()), Error);
  EXPECT_THROW(Tensor::empty({2}, DataType(DataType::kFloat, 32, 4)), Error);
  EXPECT_THROW(Tensor::empty({int64_t{1} << 40, int64_t{1} << 40}, DataType::float32()), Error);
}

TEST(Tensor, CopyFromAndToBytesRoundTrip) {
  Tensor a = random_float_tensor({4, 6});
  std::vector<float> host(24);
  a.copy_to_bytes(host.data(), host.size() * 4);
  EXPECT_EQ(std::memcmp(host.data(), a.data(), 96), 0);
  Tensor b = Tensor::empty({4, 6}, DataType::float32());
  b.copy_from_bytes(host.data(), 96);
  EXPECT_EQ(std::memcmp(b.data(), a.data(), 96), 0);
  EXPECT_THROW(b.copy_from_bytes(host.data(), 95), Error);
  Tensor c = a.copy_to(Device::cpu());
  EXPECT_NE(c.data(), a.data());
  EXPECT_EQ(std::memcmp(c.data(), a.data(), 96), 0);
}

TEST(Tensor, CopyFromChecksShapeAndDtype) {
  Tensor a = Tensor::empty({2, 3}, DataType::float32());
  try {
    a.copy_from(Tensor::empty({3, 2}, DataType::float32()));
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("[3, 2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(a.copy_from(Tensor::empty({2, 3}, DataType::int32())), Error);
}

TEST(Tensor, StridedCopyMatchesNaiveLoop) {
  // A transposed view of a 5x7 matrix (strides {1, 7}) copied into a compact 7x5 tensor.
  Tensor src = random_float_tensor({5, 7});
  std::vector<int64_t> shape{7, 5}, strides{1, 7};
  Tensor transposed = Tensor::wrap(src.data(), shape, DataType::float32(), Device::cpu(), src.owner(), strides);
  EXPECT_FALSE(transposed.is_contiguous());
  Tensor dst = Tensor::empty({7, 5}, DataType::float32());
  dst.copy_from(transposed);
  auto* s = static_cast<float*>(src.data());
  auto* d = static_cast<float*>(dst.data());
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 5; ++j) ASSERT_EQ(d[i * 5 + j], s[j * 7 + i]) << i << "," << j;
}

TEST(Tensor, ViewsShareMemoryAndCheckBounds) {
  Tensor a = random_float_tensor({4, 4});
  std::vector<int64_t> row{4};
  Tensor second_row = a.view(row, std::nullopt, 4 * sizeof(float));
  EXPECT_EQ(second_row.data(), static_cast<char*>(a.data()) + 16);
  static_cast<float*>(second_row.data())[0] = 123.0f;
  EXPECT_EQ(static_cast<float*>(a.data())[4], 123.0f);
  std::vector<int64_t> bytes{64};
  EXPECT_EQ(a.view(bytes, DataType::uint8()).nbytes(), 64u);
  std::vector<int64_t> too_big{17};
  EXPECT_THROW(a.view(too_big), Error);
  EXPECT_THROW(a.view(row, std::nullopt, 60), Error);
  // The view keeps the memory alive after the base handle goes.
  void* data = a.data();
  a = Tensor();
  EXPECT_EQ(static_cast<float*>(data)[4], 123.0f);
  EXPECT_EQ(static_cast<float*>(second_row.data())[0], 123.0f);
}

TEST(Tensor, DlpackRoundTripIsZeroCopyAndDeletesOnce) {
  Tensor a = random_float_tensor({3, 4});
  DLManagedTensor* managed = a.to_dlpack();
  EXPECT_EQ(managed->dl_tensor.data, a.dl()->data);
  EXPECT_EQ(a.node()->use_count(), 2);  // the capsule holds a reference
  {
    Tensor b = Tensor::from_dlpack(managed);
    EXPECT_EQ(b.data(), a.data());
    EXPECT_EQ(b.shape(), a.shape());
    EXPECT_EQ(b.dtype(), DataType::float32());
  }
  EXPECT_EQ(a.node()->use_count(), 1);  // deleter ran exactly once
}

TEST(Tensor, FromDlpackKeepsForeignStridesAndOffset) {
  static int deleted = 0;
  static float storage[12];
  for (int i = 0; i < 12; ++i) storage[i] = static_cast<float>(i) + 0.5f;
  static int64_t shape[2] = {2, 3};
  static int64_t strides[2] = {1, 2};  // column-major 2x3 starting at element 2
  auto* m = new DLManagedTensor{};
  m->dl_tensor = DLTensor{storage, {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, shape, strides, 2 * sizeof(float)};
  m->deleter = [](DLManagedTensor* self) {
    ++deleted;
    delete self;
  };
  {
    Tensor t = Tensor::from_dlpack(m);
    EXPECT_FALSE(t.is_contiguous());
    Tensor c = t.copy_to(Device::cpu());
    auto* p = static_cast<float*>(c.data());
    EXPECT_EQ(p[0], 2.5f);  // (0,0) -> storage[2]
    EXPECT_EQ(p[1], 4.5f);  // (0,1) -> storage[2 + 2]
    EXPECT_EQ(p[3], 3.5f);  // (1,0) -> storage[2 + 1]
  }
  EXPECT_EQ(deleted, 1);
}

TEST(Tensor, AllocatorBackedTensorReturnsMemoryOnDestruction) {
  Allocator* pooled = get_allocator(Device::cpu(), AllocatorKind::kPooled);
  size_t before = pooled->bytes_in_use();
  {
    Tensor t = Tensor::empty({256, 256}, DataType::float32(), Device::cpu(), pooled);
    EXPECT_GE(pooled->bytes_in_use(), before + 256 * 256 * 4);
  }
  EXPECT_EQ(pooled->bytes_in_use(), before);
}

}  // namespace
}  // namespace anvil
