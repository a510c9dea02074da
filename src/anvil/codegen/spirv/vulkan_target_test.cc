// resolve_vulkan_target: written options win, -from_device fills the rest (ValueError naming a
// missing device), a bare "vulkan" takes device 0 when there is one, else the defaults.
#include "anvil/codegen/spirv/vulkan_target.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"

namespace anvil::codegen::spirv {
namespace {

TEST(VulkanTarget, WrittenOptionsWinOverDefaults) {
  VulkanTarget t = resolve_vulkan_target(
      Target::parse("vulkan -max_push_constants_size=256 -supports_int64=1 -max_num_threads=1024 -thread_warp_size=32"));
  EXPECT_EQ(t.max_push_constants_size, 256);
  EXPECT_TRUE(t.supports_int64);
  EXPECT_FALSE(t.supports_float64);  // not written, no device asked: the default
  EXPECT_EQ(t.max_num_threads, 1024);
  EXPECT_EQ(t.thread_warp_size, 32);
  EXPECT_EQ(t.max_uniform_buffer_range, 16384);
  EXPECT_EQ(t.max_shared_memory_per_block, 16384);
  EXPECT_TRUE(t.device_name.empty());
  EXPECT_EQ(t.max_workgroup_size[0], 1024);  // no device: only the product is limited
  EXPECT_EQ(t.max_workgroup_size[2], 1024);
}

TEST(VulkanTarget, MissingDeviceIsAValueErrorNamingIt) {
  try {
    resolve_vulkan_target(Target::parse("vulkan -from_device=97"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("no Vulkan device 97"), std::string::npos) << e.what();
  }
}

TEST(VulkanTarget, BareTargetTakesDeviceZeroWhenPresent) {
  VulkanTarget t = resolve_vulkan_target(Target::parse("vulkan"));
  if (vulkan::num_devices() == 0) {
    EXPECT_TRUE(t.device_name.empty());
    EXPECT_FALSE(t.supports_int64);
    EXPECT_EQ(t.max_num_threads, 256);
    return;
  }
  auto d = vulkan::query_device_limits(0);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(t.device_name, d->device_name);
  EXPECT_EQ(t.max_num_threads, d->max_num_threads);
  EXPECT_EQ(t.supports_int64, d->supports_int64);
  // -from_device with a written option: the option wins, the rest comes from the device.
  VulkanTarget u = resolve_vulkan_target(Target::parse("vulkan -from_device=0 -max_num_threads=32"));
  EXPECT_EQ(u.max_num_threads, 32);
  EXPECT_EQ(u.max_shared_memory_per_block, d->max_shared_memory_per_block);
}

}  // namespace
}  // namespace anvil::codegen::spirv
