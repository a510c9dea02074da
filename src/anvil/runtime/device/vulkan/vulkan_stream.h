// A Vulkan stream: one command buffer that collects dispatches and copies until sync(), which
// submits it with one fence and waits. A memory barrier follows every dispatch and copy, so
// later commands see earlier writes. Per-dispatch resources (descriptor sets, uniform-block
// slices) come from the stream and stay alive until the sync that retires them.
// Not thread-safe: callers hold the device's mutex.
#pragma once

#include <cstdint>
#include <vector>

#include "anvil/runtime/device/vulkan/vulkan_buffer.h"
#include "anvil/runtime/device/vulkan/vulkan_loader.h"

namespace anvil::vulkan {

class VulkanDevice;

class VulkanStream {
 public:
  explicit VulkanStream(VulkanDevice& device);
  ~VulkanStream();  // syncs, then destroys its objects
  VulkanStream(const VulkanStream&) = delete;
  VulkanStream& operator=(const VulkanStream&) = delete;

  // The command buffer in the recording state (begun on first use after a sync).
  VkCommandBuffer record();
  bool pending() const { return recording_; }
  // Barriers recorded after a dispatch / a transfer: the writes become visible to later
  // compute and transfer commands (and to the host after sync, for transfers).
  void barrier_after_dispatch();
  void barrier_after_transfer();
  // Submits what was recorded and waits for it; a no-op when nothing is pending.
  void sync();

  // A descriptor set of `layout`, valid until the next sync.
  VkDescriptorSet allocate_descriptor_set(VkDescriptorSetLayout layout);
  // `bytes` of host-visible uniform memory (aligned for binding), valid until the next sync.
  struct UniformSlice {
    VkBuffer buffer;
    VkDeviceSize offset;
    void* data;
  };
  UniformSlice allocate_uniform(uint32_t bytes);
  // Destroys `buffer` once the work recorded so far has run (at the next sync; now when nothing
  // is pending).
  void destroy_after_sync(VulkanBuffer* buffer);

 private:
  VulkanDevice& device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  bool recording_ = false;
  std::vector<VkDescriptorPool> descriptor_pools_;
  size_t current_pool_ = 0;
  std::vector<VulkanBuffer*> uniform_buffers_;
  size_t current_uniform_ = 0;
  VkDeviceSize uniform_used_ = 0;
  std::vector<VulkanBuffer*> retired_;
};

}  // namespace anvil::vulkan
