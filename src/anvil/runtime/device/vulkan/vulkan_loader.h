// The Vulkan loader opened at run time: dlopen("libvulkan.so.1") and function tables filled
// through vkGetInstanceProcAddr / vkGetDeviceProcAddr. The runtime has no link-time dependency
// on libvulkan, so it loads (and reports no Vulkan device) on a machine without one.
#pragma once

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <string>

namespace anvil::vulkan {

// Global and instance-level entry points (one table per instance; globals filled first).
struct InstanceFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
#define ANVIL_VK_GLOBAL(name) PFN_##name name = nullptr;
#define ANVIL_VK_INSTANCE(name) PFN_##name name = nullptr;
#define ANVIL_VK_DEVICE(name)
#include "anvil/runtime/device/vulkan/vulkan_functions.def"
};

struct DeviceFunctions {
#define ANVIL_VK_GLOBAL(name)
#define ANVIL_VK_INSTANCE(name)
#define ANVIL_VK_DEVICE(name) PFN_##name name = nullptr;
#include "anvil/runtime/device/vulkan/vulkan_functions.def"
};

// Opens the loader once (thread-safe) and fills the global entry points; false (with the reason
// in *why) when there is no loader. Never throws.
bool load_vulkan_library(InstanceFunctions* fns, std::string* why);
// Fills the instance entry points; RuntimeError when a required one is missing.
void load_instance_functions(VkInstance instance, InstanceFunctions* fns);
// Fills the device entry points; RuntimeError when a required one is missing.
void load_device_functions(const InstanceFunctions& ifns, VkDevice device, DeviceFunctions* fns);

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.
const char* vk_result_name(VkResult r);
// Throws RuntimeError "<what> failed: <VkResult>" unless r is VK_SUCCESS.
void vk_check(VkResult r, const char* what);

}  // namespace anvil::vulkan
