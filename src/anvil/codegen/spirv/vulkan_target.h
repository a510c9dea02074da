// The effective attributes of a `vulkan` target: what the SPIR-V code generator may use.
//
// Rules, in order:
//   1. Options written in the target win (`vulkan -supports_int64=1 -max_num_threads=512`).
//   2. `-from_device=N` fills every other attribute from anvil::vulkan::query_device_limits(N);
//      ValueError naming the device when there is no such device on this machine.
//   3. A target with no attributes at all ("vulkan") takes device 0's limits when this machine
//      has a Vulkan device (unlike TVM, which then assumes defaults).
//   4. Otherwise conservative defaults: max_push_constants_size 128, max_uniform_buffer_range
//      16384, max_num_threads 256, thread_warp_size 1, max_shared_memory_per_block 16384,
//      supported_subgroup_operations 0, and every supports_* flag false (a plain Vulkan 1.1
//      device: 32-bit int and float only).
#pragma once

#include <cstdint>
#include <string>

#include "anvil/target/target.h"

namespace anvil::codegen::spirv {

struct VulkanTarget {
  std::string device_name;  // the device the attributes came from ("" when none)
  int64_t supported_subgroup_operations = 0;
  int64_t max_push_constants_size = 128;
  int64_t max_uniform_buffer_range = 16384;
  int64_t max_num_threads = 256;
  int64_t thread_warp_size = 1;
  int64_t max_shared_memory_per_block = 16384;
  // Per-axis workgroup size limit (maxComputeWorkGroupSize): no target attribute; from the
  // device when one is queried, else max_num_threads on every axis (only the product is checked).
  int64_t max_workgroup_size[3] = {128, 128, 64};
  bool supports_float16 = false;
  bool supports_float64 = false;
  bool supports_int8 = false;
  bool supports_int16 = false;
  bool supports_int64 = false;
  bool supports_8bit_buffer = false;
  bool supports_16bit_buffer = false;
};

// The attributes of `target` (kind vulkan; InternalError for another kind) by the rules above.
VulkanTarget resolve_vulkan_target(const Target& target);

}  // namespace anvil::codegen::spirv
