// Device names, parsing and the CPU DeviceAPI.
#include "anvil/runtime/device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

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

// device_types.def is the only list: every row parses back to its code, canonical names print
// as themselves, each code has exactly one canonical name, aliases print as their canonical name.
TEST(Device, EveryTableNameRoundTrips) {
  std::map<int32_t, int> canonical_count;
  for (const DeviceTypeName& entry : device_type_names()) {
    if (!entry.alias) ++canonical_count[entry.code];
    if (!device_type_fits(entry.code)) continue;
    DLDeviceType type = device_type_from_name(entry.name);
    EXPECT_EQ(static_cast<int32_t>(type), entry.code) << entry.name;
    if (!entry.alias) {
      EXPECT_EQ(device_type_name(type), entry.name);
    }
    EXPECT_EQ(Device::parse(std::string(entry.name) + ":3").to_string(), std::string(device_code_name(entry.code)) + ":3");
  }
  for (const DeviceTypeName& entry : device_type_names())
    EXPECT_EQ(canonical_count[entry.code], 1) << "code " << entry.code << " (" << entry.name << ")";
  EXPECT_EQ(canonical_count.size(), 14u);  // DLPack 0.8: 1-4, 7-16
  // TVM's aliases, which the Python side used to list on its own.
  for (const char* alias : {"llvm", "c", "gpu", "nvptx", "cl", "hip"})
    EXPECT_TRUE(std::any_of(device_type_names().begin(), device_type_names().end(),
                            [&](const DeviceTypeName& e) { return e.alias && e.name == alias; }))
        << alias;
}

// Hexagon's code is named but cannot live in this build's DLDeviceType: refused with its code.
TEST(Device, HexagonIsNamedButRefusedAsADevice) {
  EXPECT_EQ(device_code_name(16), "hexagon");
  EXPECT_FALSE(device_type_fits(16));
  EXPECT_TRUE(device_type_fits(15));
  for (int32_t code : {0, 5, 6, 17, -1}) EXPECT_FALSE(device_type_fits(code)) << code;
  try {
    device_type_from_name("hexagon");
    FAIL() << "hexagon parsed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("code 16"), std::string::npos) << e.what();
  }
  try {
    device_type_from_name("tpu");
    FAIL() << "tpu parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cpu, cuda, cuda_host, opencl, vulkan"), std::string::npos) << e.what();
  }
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
