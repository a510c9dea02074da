// One logical Vulkan device: its queue, the features it was created with, buffer creation from
// the right memory types, the default stream, the staging buffer for host copies, and the
// pipelines made for it (cached per module and kernel, with a VkPipelineCache). Callers hold
// mutex() around everything that records or submits work.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <utility>

#include "anvil/runtime/device/vulkan/vulkan_buffer.h"
#include "anvil/runtime/device/vulkan/vulkan_instance.h"
#include "anvil/runtime/device/vulkan/vulkan_pipeline.h"

namespace anvil::vulkan {

class VulkanStream;

class VulkanDevice {
 public:
  VulkanDevice(const VulkanInstance& instance, const PhysicalDeviceInfo& info, int id);
  ~VulkanDevice();  // waits for the queue, then destroys everything it made
  VulkanDevice(const VulkanDevice&) = delete;
  VulkanDevice& operator=(const VulkanDevice&) = delete;

  int id() const { return id_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  const DeviceFunctions& fn() const { return fn_; }
  VkDevice handle() const { return device_; }
  VkQueue queue() const { return queue_; }
  std::mutex& mutex() { return mu_; }
  // Push descriptors are used when the device offers them and no DISABLE switch is set.
  bool use_push_descriptor() const { return use_push_descriptor_; }

  // A buffer of `nbytes` (at least 1). Device buffers come from DEVICE_LOCAL memory (types not
  // host-visible preferred) with storage and transfer usage; host-visible ones are mapped.
  // RuntimeError when out of memory.
  VulkanBuffer* create_buffer(VkDeviceSize nbytes, VkBufferUsageFlags usage, bool host_visible);
  void destroy_buffer(VulkanBuffer* buffer);
  // Tensor memory (tracked so exit-time shutdown frees what is still alive). A freed buffer
  // outlives the work already recorded on the default stream; work on streams made with
  // create_stream must be synced by the caller before the memory it uses is freed.
  VulkanBuffer* alloc_tensor_buffer(VkDeviceSize nbytes);
  void free_tensor_buffer(VulkanBuffer* buffer);
  bool owns_tensor_buffer(const VulkanBuffer* buffer) const {
    return live_.count(const_cast<VulkanBuffer*>(buffer)) != 0;
  }

  VulkanStream& default_stream() { return *default_stream_; }
  // Streams made for DeviceAPI::create_stream (destroyed at shutdown if never freed).
  VulkanStream* create_stream();
  void free_stream(VulkanStream* stream);  // ValueError for a stream it did not make
  bool owns_stream(const VulkanStream* stream) const;
  // A host-visible staging buffer of at least min(nbytes, kMaxStagingBytes) bytes (grown as
  // needed, reused across copies; only valid until the next staging() call).
  VulkanBuffer& staging(VkDeviceSize nbytes);
  static constexpr VkDeviceSize kMaxStagingBytes = VkDeviceSize{16} << 20;

  // The pipeline of kernel `index` of module `module_id`, made on first use.
  const VulkanPipeline& pipeline(uint64_t module_id, size_t index, const KernelInfo& kernel);
  // Destroys the pipelines of a module that goes away (syncs the default stream first).
  void drop_module(uint64_t module_id);
  VkPipelineCache pipeline_cache() const { return pipeline_cache_; }

 private:
  uint32_t find_memory_type(uint32_t type_bits, bool host_visible) const;

  int id_;
  const PhysicalDeviceInfo& info_;
  DeviceFunctions fn_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  bool use_push_descriptor_ = false;
  std::mutex mu_;
  std::unordered_set<VulkanBuffer*> live_;
  std::unique_ptr<VulkanStream> default_stream_;
  std::unordered_set<VulkanStream*> streams_;
  VulkanBuffer* staging_ = nullptr;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::map<std::pair<uint64_t, size_t>, VulkanPipeline> pipelines_;
};

}  // namespace anvil::vulkan
