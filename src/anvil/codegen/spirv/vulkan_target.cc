// resolve_vulkan_target (see vulkan_target.h).
#include "anvil/codegen/spirv/vulkan_target.h"

#include <optional>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"

namespace anvil::codegen::spirv {
namespace {

bool has_any_attribute(const Target& t) {
  for (std::string_view key : Target::option_keys(TargetKind::kVulkan))
    if (t.has(key)) return true;
  return false;
}

VulkanTarget from_limits(const vulkan::DeviceLimits& d) {
  VulkanTarget v;
  v.device_name = d.device_name;
  v.supported_subgroup_operations = d.supported_subgroup_operations;
  v.max_push_constants_size = d.max_push_constants_size;
  v.max_uniform_buffer_range = d.max_uniform_buffer_range;
  v.max_num_threads = d.max_num_threads;
  v.thread_warp_size = d.thread_warp_size;
  v.max_shared_memory_per_block = d.max_shared_memory_per_block;
  v.supports_float16 = d.supports_float16;
  v.supports_float64 = d.supports_float64;
  v.supports_int8 = d.supports_int8;
  v.supports_int16 = d.supports_int16;
  v.supports_int64 = d.supports_int64;
  v.supports_8bit_buffer = d.supports_8bit_buffer;
  v.supports_16bit_buffer = d.supports_16bit_buffer;
  for (int i = 0; i < 3; ++i) v.max_workgroup_size[i] = d.max_workgroup_size[i];
  return v;
}

void take_int(const Target& t, std::string_view key, int64_t* out) {
  if (auto v = t.get_int(key)) *out = *v;
}
void take_bool(const Target& t, std::string_view key, bool* out) {
  if (auto v = t.get_bool(key)) *out = *v;
}

}  // namespace

VulkanTarget resolve_vulkan_target(const Target& target) {
  ANVIL_ICHECK(target.kind() == TargetKind::kVulkan, "resolve_vulkan_target: not a vulkan target: ", target.str());
  VulkanTarget v;
  if (auto dev = target.get_int("from_device")) {
    std::optional<vulkan::DeviceLimits> limits = vulkan::query_device_limits(static_cast<int>(*dev));
    if (!limits)
      value_error("vulkan target '", target.str(), "': -from_device=", *dev, " but this machine has no Vulkan device ",
                  *dev, " (", vulkan::num_devices(), " device(s) found)");
    v = from_limits(*limits);
  } else if (!has_any_attribute(target) && vulkan::num_devices() > 0) {
    if (auto limits = vulkan::query_device_limits(0)) v = from_limits(*limits);
  }
  take_int(target, "supported_subgroup_operations", &v.supported_subgroup_operations);
  take_int(target, "max_push_constants_size", &v.max_push_constants_size);
  take_int(target, "max_uniform_buffer_range", &v.max_uniform_buffer_range);
  take_int(target, "max_num_threads", &v.max_num_threads);
  take_int(target, "thread_warp_size", &v.thread_warp_size);
  take_int(target, "max_shared_memory_per_block", &v.max_shared_memory_per_block);
  take_bool(target, "supports_float16", &v.supports_float16);
  take_bool(target, "supports_float64", &v.supports_float64);
  take_bool(target, "supports_int8", &v.supports_int8);
  take_bool(target, "supports_int16", &v.supports_int16);
  take_bool(target, "supports_int64", &v.supports_int64);
  take_bool(target, "supports_8bit_buffer", &v.supports_8bit_buffer);
  take_bool(target, "supports_16bit_buffer", &v.supports_16bit_buffer);
  if (v.device_name.empty())
    for (int64_t& m : v.max_workgroup_size) m = v.max_num_threads;
  if (v.max_push_constants_size < 0 || v.max_uniform_buffer_range <= 0 || v.max_num_threads <= 0 ||
      v.max_shared_memory_per_block < 0)
    value_error("vulkan target '", target.str(), "': limits must be positive (max_push_constants_size ",
                v.max_push_constants_size, ", max_uniform_buffer_range ", v.max_uniform_buffer_range,
                ", max_num_threads ", v.max_num_threads, ", max_shared_memory_per_block ",
                v.max_shared_memory_per_block, ")");
  return v;
}

}  // namespace anvil::codegen::spirv
