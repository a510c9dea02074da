// Pipeline creation for one kernel on one device.
#include "anvil/runtime/device/vulkan/vulkan_pipeline.h"

#include <vector>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_env.h"

namespace anvil::vulkan {

VulkanPipeline create_pipeline(VulkanDevice& device, const KernelInfo& kernel) {
  const DeviceFunctions& fn = device.fn();
  const VkPhysicalDeviceLimits& limits = device.info().props.limits;
  VkDevice dev = device.handle();
  uint32_t num_tensors = static_cast<uint32_t>(kernel.num_tensors());
  VulkanPipeline p;
  p.num_bindings = num_tensors + (kernel.block_in_uniform ? 1 : 0);
  if (!kernel.block_in_uniform && kernel.block_bytes > 0) {
    p.push_constant_bytes = (kernel.block_bytes + 3) / 4 * 4;
    if (p.push_constant_bytes > limits.maxPushConstantsSize)
      value_error("vulkan kernel '", kernel.name, "': its ", kernel.block_bytes,
                  "-byte scalar block exceeds vulkan:", device.id(), "'s maxPushConstantsSize of ",
                  limits.maxPushConstantsSize,
                  " bytes; compile with -max_push_constants_size=", limits.maxPushConstantsSize,
                  " or -from_device=", device.id(), " so it goes into a uniform buffer");
  }
  if (kernel.block_in_uniform && kernel.block_bytes > limits.maxUniformBufferRange)
    value_error("vulkan kernel '", kernel.name, "': its ", kernel.block_bytes,
                "-byte uniform block exceeds vulkan:", device.id(), "'s maxUniformBufferRange of ",
                limits.maxUniformBufferRange);
  uint64_t invocations = 1;
  for (int i = 0; i < 3; ++i) {
    invocations *= kernel.workgroup_size[i];
    if (kernel.workgroup_size[i] > limits.maxComputeWorkGroupSize[i])
      value_error("vulkan kernel '", kernel.name, "': workgroup size[", i, "] = ", kernel.workgroup_size[i],
                  " exceeds vulkan:", device.id(), "'s limit of ", limits.maxComputeWorkGroupSize[i]);
  }
  if (invocations > limits.maxComputeWorkGroupInvocations)
    value_error("vulkan kernel '", kernel.name, "': ", invocations,
                " threads per workgroup exceed vulkan:", device.id(), "'s maxComputeWorkGroupInvocations of ",
                limits.maxComputeWorkGroupInvocations);
  if (kernel.shared_memory_bytes > limits.maxComputeSharedMemorySize)
    value_error("vulkan kernel '", kernel.name, "': ", kernel.shared_memory_bytes,
                " bytes of workgroup memory exceed vulkan:", device.id(), "'s maxComputeSharedMemorySize of ",
                limits.maxComputeSharedMemorySize);
  p.push_descriptor = device.use_push_descriptor() && p.num_bindings <= device.info().max_push_descriptors;

  std::string save_dir = env_string("ANVIL_VULKAN_DEBUG_SHADER_SAVEPATH", "TVM_VULKAN_DEBUG_SHADER_SAVEPATH");
  if (!save_dir.empty()) save_shader(save_dir, kernel.name, kernel.spirv);

  try {
    VkShaderModuleCreateInfo shader{};
    shader.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    shader.codeSize = kernel.spirv.size() * sizeof(uint32_t);
    shader.pCode = kernel.spirv.data();
    vk_check(fn.vkCreateShaderModule(dev, &shader, nullptr, &p.shader), "vkCreateShaderModule");

    std::vector<VkDescriptorSetLayoutBinding> bindings(p.num_bindings);
    for (uint32_t i = 0; i < p.num_bindings; ++i) {
      bindings[i].binding = i;
      bindings[i].descriptorType =
          i < num_tensors ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER;
      bindings[i].descriptorCount = 1;
      bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo set{};
    set.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    set.flags = p.push_descriptor ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0;
    set.bindingCount = p.num_bindings;
    set.pBindings = bindings.data();
    vk_check(fn.vkCreateDescriptorSetLayout(dev, &set, nullptr, &p.set_layout), "vkCreateDescriptorSetLayout");

    VkPushConstantRange range{VK_SHADER_STAGE_COMPUTE_BIT, 0, p.push_constant_bytes};
    VkPipelineLayoutCreateInfo layout{};
    layout.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    layout.setLayoutCount = 1;
    layout.pSetLayouts = &p.set_layout;
    layout.pushConstantRangeCount = p.push_constant_bytes > 0 ? 1 : 0;
    layout.pPushConstantRanges = &range;
    vk_check(fn.vkCreatePipelineLayout(dev, &layout, nullptr, &p.layout), "vkCreatePipelineLayout");

    VkComputePipelineCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
    info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
    info.stage.module = p.shader;
    info.stage.pName = kernel.entry_point.c_str();
    info.layout = p.layout;
    VkResult r = fn.vkCreateComputePipelines(dev, device.pipeline_cache(), 1, &info, nullptr, &p.pipeline);
    if (r != VK_SUCCESS)
      runtime_error("vulkan kernel '", kernel.name, "': vkCreateComputePipelines failed: ", vk_result_name(r),
                    " (entry point '", kernel.entry_point, "')");
  } catch (...) {
    destroy_pipeline(device, p);
    throw;
  }
  return p;
}

void destroy_pipeline(VulkanDevice& device, VulkanPipeline& p) {
  const DeviceFunctions& fn = device.fn();
  VkDevice dev = device.handle();
  if (p.pipeline) fn.vkDestroyPipeline(dev, p.pipeline, nullptr);
  if (p.layout) fn.vkDestroyPipelineLayout(dev, p.layout, nullptr);
  if (p.set_layout) fn.vkDestroyDescriptorSetLayout(dev, p.set_layout, nullptr);
  if (p.shader) fn.vkDestroyShaderModule(dev, p.shader, nullptr);
  p = VulkanPipeline{};
}

}  // namespace anvil::vulkan
