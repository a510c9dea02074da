// The DeviceAPI of kDLVulkan: tensor memory is a VulkanBuffer* (opaque to the host; offsets go
// through byte_offset), host copies go through the device's staging buffer, device copies are
// vkCmdCopyBuffer on the stream. Streams: nullptr is the device's default stream (where kernels
// run); create_stream makes another (work given to it first flushes the default stream, so it
// sees the kernels' results). Registered by register_vulkan_device_api() when a Vulkan
// loader is present; kExist says whether the device itself is there.
#pragma once

#include "anvil/runtime/device_api.h"

namespace anvil::vulkan {

// The process-lifetime singleton.
DeviceAPI* vulkan_device_api();
// Registers it for kDLVulkan when libvulkan.so.1 can be opened (does not create an instance).
// Idempotent.
void register_vulkan_device_api();

}  // namespace anvil::vulkan
