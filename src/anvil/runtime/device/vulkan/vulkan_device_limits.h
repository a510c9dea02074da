// What a local Vulkan device offers, in the terms of the `vulkan` target's attributes
// (target_kinds.def): the compiler reads it for `-from_device=N` and for a `vulkan` target
// written without attributes; `anvil.vulkan(0)` attributes come from it too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace anvil::vulkan {

struct DeviceLimits {
  std::string device_name;
  uint32_t api_version = 0;
  int64_t supported_subgroup_operations = 0;  // VkSubgroupFeatureFlags (0: no subgroup ops)
  int64_t max_push_constants_size = 128;
  int64_t max_uniform_buffer_range = 16384;
  int64_t max_num_threads = 256;              // maxComputeWorkGroupInvocations
  int64_t thread_warp_size = 1;               // subgroupSize
  int64_t max_shared_memory_per_block = 16384;  // maxComputeSharedMemorySize
  int64_t max_workgroup_count[3] = {65535, 65535, 65535};
  int64_t max_workgroup_size[3] = {128, 128, 64};
  int64_t min_storage_buffer_offset_alignment = 256;
  bool supports_float16 = false;   // shaderFloat16
  bool supports_float64 = false;   // shaderFloat64
  bool supports_int8 = false;      // shaderInt8
  bool supports_int16 = false;     // shaderInt16
  bool supports_int64 = false;     // shaderInt64
  bool supports_8bit_buffer = false;   // storageBuffer8BitAccess
  bool supports_16bit_buffer = false;  // storageBuffer16BitAccess
  bool supports_push_descriptor = false;  // VK_KHR_push_descriptor
};

// Vulkan devices on this machine, in the runtime's order (discrete GPUs first; ANVIL_VULKAN_DEVICE
// may pick one); 0 when there is no Vulkan loader or no device. Never throws for a missing loader.
int num_devices();
// The limits of device `device_id`, or nullopt when it does not exist.
std::optional<DeviceLimits> query_device_limits(int device_id);

}  // namespace anvil::vulkan
