// The compute pipeline of one kernel on one device: shader module, descriptor-set layout
// (storage buffers at bindings 0..T-1 in tensor order, the uniform scalar block at binding T
// when block_in_uniform; push-descriptor layout when the device uses them), pipeline layout
// (one push-constant range for the scalar block otherwise) and the pipeline itself.
// ANVIL_VULKAN_DEBUG_SHADER_SAVEPATH=dir writes <kernel>.spv and <kernel>.spvasm on creation.
#pragma once

#include <cstdint>

#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/runtime/device/vulkan/vulkan_loader.h"

namespace anvil::vulkan {

class VulkanDevice;

struct VulkanPipeline {
  VkShaderModule shader = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  VkPipeline pipeline = VK_NULL_HANDLE;
  bool push_descriptor = false;      // bind with vkCmdPushDescriptorSetKHR
  uint32_t push_constant_bytes = 0;  // 0: no push constants
  uint32_t num_bindings = 0;
};

// ValueError when the kernel does not fit the device (push constants, workgroup size);
// RuntimeError when Vulkan rejects it.
VulkanPipeline create_pipeline(VulkanDevice& device, const KernelInfo& kernel);
void destroy_pipeline(VulkanDevice& device, VulkanPipeline& pipeline);

// Writes <dir>/<name>.spv and, when SPIRV-Tools is linked, <dir>/<name>.spvasm (the name with
// anything but [A-Za-z0-9_.-] replaced by _); creates dir; IOError on failure.
void save_shader(const std::string& dir, const std::string& name, const std::vector<uint32_t>& spirv);

}  // namespace anvil::vulkan
