// A Vulkan buffer with its own memory: what DeviceAPI::alloc hands out as the "data pointer" of
// a Vulkan tensor (opaque to the host: offsets travel as DLTensor::byte_offset), and the
// host-visible staging and uniform buffers (mapped for their whole life).
#pragma once

#include <cstdint>

#include "anvil/runtime/device/vulkan/vulkan_loader.h"

namespace anvil::vulkan {

struct VulkanBuffer {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  VkDeviceSize size = 0;   // bytes usable (the request, at least 1)
  void* mapped = nullptr;  // host-visible buffers only
  bool coherent = true;    // host-visible: HOST_COHERENT (else flush / invalidate)
  int device_id = 0;
};

}  // namespace anvil::vulkan
