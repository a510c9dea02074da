// Recording one kernel dispatch.
#include "anvil/runtime/device/vulkan/vulkan_dispatch.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_launch_args.h"
#include "anvil/runtime/device/vulkan/vulkan_stream.h"

namespace anvil::vulkan {

void dispatch_kernel(uint64_t module_id, size_t index, const KernelInfo& kernel, Args args) {
  VulkanInstance* inst = VulkanInstance::get();
  if (inst == nullptr) runtime_error("vulkan kernel '", kernel.name, "': the Vulkan runtime has shut down");
  auto device_of = [&](int id) -> const PhysicalDeviceInfo& {
    if (id < 0 || id >= inst->num_devices())
      value_error("vulkan kernel '", kernel.name, "': vulkan:", id, " does not exist (", inst->num_devices(),
                  " Vulkan device(s))");
    return inst->physical(id);
  };
  LaunchArgs launch = prepare_launch(
      kernel, args, [&](int id) { return uint64_t{device_of(id).props.limits.minStorageBufferOffsetAlignment}; },
      [&](int id) {
        const uint32_t* m = device_of(id).props.limits.maxComputeWorkGroupCount;
        return std::array<uint32_t, 3>{m[0], m[1], m[2]};
      });
  device_of(launch.device_id);
  VulkanDevice& device = inst->device(launch.device_id);
  std::lock_guard<std::mutex> lock(device.mutex());
  const VulkanPipeline& p = device.pipeline(module_id, index, kernel);
  if (launch.grid[0] == 0 || launch.grid[1] == 0 || launch.grid[2] == 0) return;  // no work

  for (const DLTensor* t : launch.tensors)
    if (!device.owns_tensor_buffer(static_cast<const VulkanBuffer*>(t->data)))
      value_error("vulkan kernel '", kernel.name, "': a tensor's memory was not allocated on vulkan:", device.id());
  VulkanStream& stream = device.default_stream();
  const DeviceFunctions& fn = device.fn();
  std::vector<VkDescriptorBufferInfo> infos(p.num_bindings);
  VkDeviceSize max_range = device.info().props.limits.maxStorageBufferRange;
  for (size_t i = 0; i < launch.tensors.size(); ++i) {
    const DLTensor* t = launch.tensors[i];
    const auto* b = static_cast<const VulkanBuffer*>(t->data);
    VkDeviceSize nbytes = DataType(t->dtype).bytes();
    for (int d = 0; d < t->ndim; ++d) nbytes *= static_cast<VkDeviceSize>(t->shape[d]);
    if (t->byte_offset > b->size || nbytes > b->size - t->byte_offset)
      value_error("vulkan kernel '", kernel.name, "': tensor ", i, " (", nbytes, " bytes at offset ", t->byte_offset,
                  ") overruns its ", b->size, "-byte buffer");
    if (nbytes > max_range)
      value_error("vulkan kernel '", kernel.name, "': tensor ", i, " has ", nbytes,
                  " bytes, more than vulkan:", device.id(), "'s maxStorageBufferRange of ", max_range);
    infos[i] = {b->buffer, t->byte_offset, std::min(b->size - t->byte_offset, max_range)};
  }
  if (kernel.block_in_uniform) {
    VulkanStream::UniformSlice slice = stream.allocate_uniform(kernel.block_bytes);
    std::memcpy(slice.data, launch.block.data(), launch.block.size());
    infos.back() = {slice.buffer, slice.offset, kernel.block_bytes};
  }
  std::vector<VkWriteDescriptorSet> writes(p.num_bindings);
  for (uint32_t i = 0; i < p.num_bindings; ++i) {
    VkWriteDescriptorSet& w = writes[i];
    w.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    w.dstBinding = i;
    w.descriptorCount = 1;
    w.descriptorType = (kernel.block_in_uniform && i + 1 == p.num_bindings) ? VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                                                                            : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    w.pBufferInfo = &infos[i];
  }
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!p.push_descriptor && p.num_bindings > 0) {
    set = stream.allocate_descriptor_set(p.set_layout);
    for (VkWriteDescriptorSet& w : writes) w.dstSet = set;
    fn.vkUpdateDescriptorSets(device.handle(), p.num_bindings, writes.data(), 0, nullptr);
  }

  VkCommandBuffer cmd = stream.record();
  fn.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.pipeline);
  if (p.num_bindings > 0) {
    if (p.push_descriptor) {
      fn.vkCmdPushDescriptorSetKHR(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, p.num_bindings, writes.data());
    } else {
      fn.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p.layout, 0, 1, &set, 0, nullptr);
    }
  }
  if (p.push_constant_bytes > 0) {
    std::string padded = launch.block;
    padded.resize(p.push_constant_bytes, '\0');
    fn.vkCmdPushConstants(cmd, p.layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_constant_bytes, padded.data());
  }
  fn.vkCmdDispatch(cmd, launch.grid[0], launch.grid[1], launch.grid[2]);
  stream.barrier_after_dispatch();
}

}  // namespace anvil::vulkan
