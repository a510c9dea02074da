// Device names, parsing and the CPU DeviceAPI.
#include "anvil/runtime/device.h"

#include <gtest/gtest.h>

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/device_api.h"

namespace anvil {
namespace {

TEST(Device, ParsesNamesAndAliases) {
  EXPECT_EQ(Device::parse("cpu"), Device::cpu(0));
  EXPECT_EQ(Device::parse("cuda:1"), Device::cuda(1));
  EXPECT_EQ(Device::parse("cl:2"), Device::opencl(2));
  EXPECT_EQ(Device::parse("vulkan:0").type, kDLVulkan);
  EXPECT_EQ(Device::cuda(3).to_string(), "cuda:3");
  EXPECT_EQ(static_cast<int>(Device::parse("webgpu").type), 15);  // DLPack numbering
}

TEST(Device, RejectsUnknownNamesAndBadIndices) {
  for (const char* bad : {"tpu", "cpu:", "cpu:-1", "cpu:x", ""}) EXPECT_THROW(Device::parse(bad), Error) << bad;
}

TEST(DeviceAPI, CpuAllocIsAlignedAndCopies) {
  register_device_apis();
  DeviceAPI* api = DeviceAPI::get(Device::cpu());
  for (size_t n : {0, 1, 63, 64, 1000, 1 << 20}) {
    void* p = api->alloc(Device::cpu(), n, kAllocAlignment);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u) << n;
    api->free(Device::cpu(), p);
  }
  char src[16] = "hello anvil";
  char dst[16] = {};
  api->copy(src, 6, dst, 2, 5, Device::cpu(), Device::cpu(), nullptr);
  EXPECT_EQ(std::memcmp(dst + 2, "anvil", 5), 0);
  EXPECT_THROW(api->alloc(Device::cpu(), 8, 96), Error);  // not a power of two
}

TEST(DeviceAPI, CpuAttributes) {
  DeviceAPI* api = DeviceAPI::get(Device::cpu());
  EXPECT_EQ(api->get_attr(Device::cpu(), DeviceAttr::kExist).as_int(), 1);
  EXPECT_FALSE(api->get_attr(Device::cpu(), DeviceAttr::kDeviceName).as_string().empty());
  EXPECT_GT(api->get_attr(Device::cpu(), DeviceAttr::kTotalGlobalMemory).as_int(), 0);
  EXPECT_TRUE(api->get_attr(Device::cpu(), DeviceAttr::kWarpSize).is_null());
  EXPECT_EQ(device_attr_from_name("device_name"), DeviceAttr::kDeviceName);
  EXPECT_THROW(device_attr_from_name("colour"), Error);
}

TEST(DeviceAPI, MissingBackendIsAClearError) {
  EXPECT_EQ(DeviceAPI::get(kDLExtDev, /*allow_missing=*/true), nullptr);
  try {
    DeviceAPI::get(kDLExtDev);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("ext_dev"), std::string::npos);
  }
}

}  // namespace
}  // namespace anvil
