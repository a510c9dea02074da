// The Vulkan DeviceAPI on the machine's device (lavapipe in CI): attributes, limits, and
// alloc/copy round trips of random data, with offsets and sizes beyond the staging buffer.
#include "anvil/runtime/device/vulkan/vulkan_device_api.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/test_util.h"

namespace anvil::vulkan {
namespace {

std::vector<uint8_t> random_bytes(size_t n) {
  std::vector<uint8_t> v(n);
  std::uniform_int_distribution<int> dist(0, 255);
  for (uint8_t& b : v) b = static_cast<uint8_t>(dist(anvil::testing::rng()));
  return v;
}

TEST(VulkanDeviceAPI, ExistsExactlyForListedDevices) {
  register_runtime_functions();
  Function exists = Registry::get("runtime.device_exists");
  EXPECT_EQ(exists(Device::vulkan(0)).as_bool(), num_devices() > 0);
  EXPECT_FALSE(exists(Device::vulkan(num_devices())).as_bool());
  EXPECT_FALSE(query_device_limits(num_devices()).has_value());
  EXPECT_FALSE(query_device_limits(-1).has_value());
}

TEST(VulkanDeviceAPI, ReportsAttributesAndLimits) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  DeviceAPI* api = DeviceAPI::get(kDLVulkan);
  Device dev = Device::vulkan(0);
  std::optional<DeviceLimits> limits = query_device_limits(0);
  ASSERT_TRUE(limits.has_value());
  EXPECT_FALSE(limits->device_name.empty());
  EXPECT_GE(limits->max_num_threads, 64);
  EXPECT_GE(limits->max_push_constants_size, 128);
  EXPECT_GE(limits->api_version, uint32_t{VK_API_VERSION_1_0});
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kExist).as_int(), 1);
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kDeviceName).as_string(), limits->device_name);
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kMaxThreadsPerBlock).as_int(), limits->max_num_threads);
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kWarpSize).as_int(), limits->thread_warp_size);
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kMaxSharedMemoryPerBlock).as_int(), limits->max_shared_memory_per_block);
  std::string dims = api->get_attr(dev, DeviceAttr::kMaxThreadDimensions).as_string();
  EXPECT_EQ(dims, str_cat("[", limits->max_workgroup_size[0], ", ", limits->max_workgroup_size[1], ", ",
                          limits->max_workgroup_size[2], "]"));
  EXPECT_GT(api->get_attr(dev, DeviceAttr::kTotalGlobalMemory).as_int(), 0);
  EXPECT_FALSE(api->get_attr(dev, DeviceAttr::kDriverVersion).is_null());
  EXPECT_EQ(api->get_attr(dev, DeviceAttr::kApiVersion).as_int(), VK_HEADER_VERSION);
  EXPECT_TRUE(api->get_attr(dev, DeviceAttr::kMaxClockRate).is_null());
  std::cout << "[ device ] " << limits->device_name << ", push descriptors "
            << (limits->supports_push_descriptor ? "yes" : "no") << ", subgroup " << limits->thread_warp_size
            << ", storage offset alignment " << limits->min_storage_buffer_offset_alignment << "\n";
}

TEST(VulkanDeviceAPI, TensorRoundTripsRandomDataOfManySizes) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  // 40 MiB + 13 is larger than the 16 MiB staging buffer: the copy goes in chunks.
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{1000}, int64_t{(1 << 20) + 7}, int64_t{(40 << 20) + 13}}) {
    std::vector<uint8_t> data = random_bytes(static_cast<size_t>(n));
    Tensor dev = Tensor::empty({n}, DataType::uint8(), Device::vulkan(0));
    dev.copy_from_bytes(data.data(), data.size());
    Tensor host = dev.copy_to(Device::cpu());
    ASSERT_EQ(std::memcmp(host.data(), data.data(), data.size()), 0) << n << " bytes";
  }
}

TEST(VulkanDeviceAPI, CopiesHonourByteOffsetsBothWaysAndOnDevice) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  DeviceAPI* api = DeviceAPI::get(kDLVulkan);
  Device dev = Device::vulkan(0), cpu = Device::cpu();
  const size_t size = 4096;
  void* a = api->alloc(dev, size, 64);
  void* b = api->alloc(dev, size, 64);
  std::vector<uint8_t> zeros(size, 0), src = random_bytes(size);
  api->copy(zeros.data(), 0, a, 0, size, cpu, dev, nullptr);
  api->copy(zeros.data(), 0, b, 0, size, cpu, dev, nullptr);
  api->copy(src.data(), 17, a, 100, 1000, cpu, dev, nullptr);  // a[100, 1100) = src[17, 1017)
  api->copy(a, 300, b, 2000, 500, dev, dev, nullptr);          // b[2000, 2500) = a[300, 800)
  std::vector<uint8_t> out(size, 0xff);
  api->copy(b, 1990, out.data(), 5, 520, dev, cpu, nullptr);  // out[5, 525) = b[1990, 2510)
  api->sync(dev, nullptr);
  for (size_t i = 0; i < 520; ++i) {
    size_t bpos = 1990 + i;
    uint8_t want = (bpos >= 2000 && bpos < 2500) ? src[17 + (bpos - 2000 + 300 - 100)] : 0;
    ASSERT_EQ(out[5 + i], want) << i;
  }
  EXPECT_EQ(out[4], 0xff);
  EXPECT_EQ(out[525], 0xff);
  EXPECT_THROW(api->copy(src.data(), 0, a, size - 10, 20, cpu, dev, nullptr), Error);

  // Overlapping copies within one buffer behave like memmove.
  std::vector<uint8_t> ref = random_bytes(size);
  api->copy(ref.data(), 0, a, 0, size, cpu, dev, nullptr);
  api->copy(a, 0, a, 100, 1000, dev, dev, nullptr);
  std::memmove(ref.data() + 100, ref.data(), 1000);
  api->copy(a, 500, a, 450, 700, dev, dev, nullptr);
  std::memmove(ref.data() + 450, ref.data() + 500, 700);
  std::vector<uint8_t> got(size);
  api->copy(a, 0, got.data(), 0, size, dev, cpu, nullptr);
  EXPECT_EQ(got, ref);
  api->free(dev, a);
  api->free(dev, b);
}

TEST(VulkanDeviceAPI, DeviceToDeviceTensorCopyAndStreams) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Tensor src = anvil::testing::random_float_tensor({257, 3});
  Tensor a = src.copy_to(Device::vulkan(0));
  Tensor b = Tensor::empty({257, 3}, DataType::float32(), Device::vulkan(0));
  b.copy_from(a);
  Tensor back = b.copy_to(Device::cpu());
  EXPECT_EQ(std::memcmp(back.data(), src.data(), src.nbytes()), 0);

  DeviceAPI* api = DeviceAPI::get(kDLVulkan);
  Stream s = api->create_stream(Device::vulkan(0));
  ASSERT_NE(s, nullptr);
  Tensor c = Tensor::empty({257, 3}, DataType::float32(), Device::vulkan(0));
  api->copy(a.dl()->data, 0, c.dl()->data, 0, a.nbytes(), Device::vulkan(0), Device::vulkan(0), s);
  api->sync(Device::vulkan(0), s);
  api->free_stream(Device::vulkan(0), s);
  back = c.copy_to(Device::cpu());
  EXPECT_EQ(std::memcmp(back.data(), src.data(), src.nbytes()), 0);
}

TEST(VulkanDeviceAPI, EmptyTensorsAndMissingDevicesFailCleanly) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Tensor empty = Tensor::empty({0, 4}, DataType::float32(), Device::vulkan(0));
  EXPECT_EQ(empty.copy_to(Device::cpu()).numel(), 0);
  try {
    Tensor::empty({4}, DataType::float32(), Device::vulkan(num_devices()));
    ADD_FAILURE() << "allocation on a missing device succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::vulkan
