// Command-buffer batching, barriers, one fence per sync, per-dispatch resources.
#include "anvil/runtime/device/vulkan/vulkan_stream.h"

#include <algorithm>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"

namespace anvil::vulkan {
namespace {

constexpr uint32_t kSetsPerPool = 256;
constexpr VkDeviceSize kUniformBufferBytes = 64 * 1024;

}  // namespace

VulkanStream::VulkanStream(VulkanDevice& device) : device_(device) {
  const DeviceFunctions& fn = device_.fn();
  VkCommandPoolCreateInfo pool{};
  pool.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pool.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT;
  pool.queueFamilyIndex = device_.info().queue_family;
  vk_check(fn.vkCreateCommandPool(device_.handle(), &pool, nullptr, &pool_), "vkCreateCommandPool");
  VkCommandBufferAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  alloc.commandPool = pool_;
  alloc.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  alloc.commandBufferCount = 1;
  vk_check(fn.vkAllocateCommandBuffers(device_.handle(), &alloc, &cmd_), "vkAllocateCommandBuffers");
  VkFenceCreateInfo fence{};
  fence.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  vk_check(fn.vkCreateFence(device_.handle(), &fence, nullptr, &fence_), "vkCreateFence");
}

VulkanStream::~VulkanStream() {
  try {
    sync();
  } catch (const Error&) {
  }
  const DeviceFunctions& fn = device_.fn();
  for (VkDescriptorPool p : descriptor_pools_) fn.vkDestroyDescriptorPool(device_.handle(), p, nullptr);
  for (VulkanBuffer* b : uniform_buffers_) device_.destroy_buffer(b);
  fn.vkDestroyFence(device_.handle(), fence_, nullptr);
  fn.vkDestroyCommandPool(device_.handle(), pool_, nullptr);  // frees cmd_
}

VkCommandBuffer VulkanStream::record() {
  if (!recording_) {
    VkCommandBufferBeginInfo begin{};
    begin.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    vk_check(device_.fn().vkBeginCommandBuffer(cmd_, &begin), "vkBeginCommandBuffer");
    recording_ = true;
  }
  return cmd_;
}

void VulkanStream::barrier_after_dispatch() {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT;
  device_.fn().vkCmdPipelineBarrier(record(), VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
                                    VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &b, 0,
                                    nullptr, 0, nullptr);
}

void VulkanStream::barrier_after_transfer() {
  VkMemoryBarrier b{};
  b.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  b.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT;
  b.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                    VK_ACCESS_TRANSFER_WRITE_BIT | VK_ACCESS_HOST_READ_BIT;
  device_.fn().vkCmdPipelineBarrier(
      record(), VK_PIPELINE_STAGE_TRANSFER_BIT,
      VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT | VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &b, 0,
      nullptr, 0, nullptr);
}

void VulkanStream::sync() {
  if (!recording_) return;
  const DeviceFunctions& fn = device_.fn();
  recording_ = false;
  vk_check(fn.vkEndCommandBuffer(cmd_), "vkEndCommandBuffer");
  for (size_t i = 0; i < uniform_buffers_.size() && i <= current_uniform_; ++i) {
    if (uniform_buffers_[i]->coherent) continue;
    VkMappedMemoryRange range{};
    range.sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE;
    range.memory = uniform_buffers_[i]->memory;
    range.size = VK_WHOLE_SIZE;
    fn.vkFlushMappedMemoryRanges(device_.handle(), 1, &range);
  }
  VkSubmitInfo submit{};
  submit.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  submit.commandBufferCount = 1;
  submit.pCommandBuffers = &cmd_;
  VkResult r = fn.vkQueueSubmit(device_.queue(), 1, &submit, fence_);
  if (r == VK_SUCCESS) {
    do {
      r = fn.vkWaitForFences(device_.handle(), 1, &fence_, VK_TRUE, uint64_t{1} << 30);
    } while (r == VK_TIMEOUT);
  }
  // Reset even after a failure so the stream can record again.
  fn.vkResetFences(device_.handle(), 1, &fence_);
  fn.vkResetCommandPool(device_.handle(), pool_, 0);
  for (VkDescriptorPool p : descriptor_pools_) fn.vkResetDescriptorPool(device_.handle(), p, 0);
  current_pool_ = 0;
  current_uniform_ = 0;
  uniform_used_ = 0;
  for (VulkanBuffer* b : retired_) device_.destroy_buffer(b);
  retired_.clear();
  vk_check(r, "vkQueueSubmit / vkWaitForFences");
}

VkDescriptorSet VulkanStream::allocate_descriptor_set(VkDescriptorSetLayout layout) {
  const DeviceFunctions& fn = device_.fn();
  for (;;) {
    bool fresh = current_pool_ == descriptor_pools_.size();
    if (fresh) {
      VkDescriptorPoolSize sizes[2] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 8},
                                       {VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER, kSetsPerPool}};
      VkDescriptorPoolCreateInfo info{};
      info.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      info.maxSets = kSetsPerPool;
      info.poolSizeCount = 2;
      info.pPoolSizes = sizes;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      vk_check(fn.vkCreateDescriptorPool(device_.handle(), &info, nullptr, &pool), "vkCreateDescriptorPool");
      descriptor_pools_.push_back(pool);
    }
    VkDescriptorSetAllocateInfo alloc{};
    alloc.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    alloc.descriptorPool = descriptor_pools_[current_pool_];
    alloc.descriptorSetCount = 1;
    alloc.pSetLayouts = &layout;
    VkDescriptorSet set = VK_NULL_HANDLE;
    VkResult r = fn.vkAllocateDescriptorSets(device_.handle(), &alloc, &set);
    if (r == VK_SUCCESS) return set;
    if (r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) vk_check(r, "vkAllocateDescriptorSets");
    if (fresh) vk_check(r, "vkAllocateDescriptorSets (fresh pool)");
    ++current_pool_;  // this pool is full until the next sync: move on to (or make) another
  }
}

void VulkanStream::destroy_after_sync(VulkanBuffer* buffer) {
  if (recording_) {
    retired_.push_back(buffer);
  } else {
    device_.destroy_buffer(buffer);
  }
}

VulkanStream::UniformSlice VulkanStream::allocate_uniform(uint32_t bytes) {
  VkDeviceSize align = std::max<VkDeviceSize>(device_.info().props.limits.minUniformBufferOffsetAlignment, 16);
  VkDeviceSize need = (bytes + align - 1) / align * align;
  for (;;) {
    if (current_uniform_ == uniform_buffers_.size()) {
      VkDeviceSize size = std::max(kUniformBufferBytes, need);
      uniform_buffers_.push_back(device_.create_buffer(size, VK_BUFFER_USAGE_UNIFORM_BUFFER_BIT, true));
    }
    VulkanBuffer* b = uniform_buffers_[current_uniform_];
    if (uniform_used_ + need <= b->size) {
      UniformSlice slice{b->buffer, uniform_used_, static_cast<char*>(b->mapped) + uniform_used_};
      uniform_used_ += need;
      return slice;
    }
    ++current_uniform_;
    uniform_used_ = 0;
  }
}

}  // namespace anvil::vulkan
