// What a physical device offers: features, extensions, subgroup and push-descriptor properties,
// and the DeviceLimits the compiler reads (num_devices / query_device_limits).
#include <algorithm>
#include <cstring>

#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/device/vulkan/vulkan_instance.h"

namespace anvil::vulkan {

bool PhysicalDeviceInfo::has_extension(std::string_view name) const {
  return std::find(extensions.begin(), extensions.end(), name) != extensions.end();
}

bool describe_physical_device(const InstanceFunctions& fns, VkPhysicalDevice handle, uint32_t instance_api,
                              PhysicalDeviceInfo* out) {
  PhysicalDeviceInfo& info = *out;
  info.handle = handle;
  fns.vkGetPhysicalDeviceProperties(handle, &info.props);
  fns.vkGetPhysicalDeviceMemoryProperties(handle, &info.memory);

  uint32_t nq = 0;
  fns.vkGetPhysicalDeviceQueueFamilyProperties(handle, &nq, nullptr);
  std::vector<VkQueueFamilyProperties> queues(nq);
  fns.vkGetPhysicalDeviceQueueFamilyProperties(handle, &nq, queues.data());
  // Prefer a compute family without graphics (a dedicated compute queue), else any compute one.
  int family = -1;
  for (uint32_t i = 0; i < nq; ++i) {
    if (!(queues[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || queues[i].queueCount == 0) continue;
    if (family < 0 || !(queues[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) family = static_cast<int>(i);
    if (!(queues[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) break;
  }
  if (family < 0) return false;
  info.queue_family = static_cast<uint32_t>(family);

  uint32_t ne = 0;
  fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &ne, nullptr);
  std::vector<VkExtensionProperties> exts(ne);
  fns.vkEnumerateDeviceExtensionProperties(handle, nullptr, &ne, exts.data());
  for (uint32_t i = 0; i < ne; ++i) info.extensions.emplace_back(exts[i].extensionName);
  uint32_t api = std::min(info.props.apiVersion, instance_api);
  bool v11 = api >= VK_API_VERSION_1_1, v12 = api >= VK_API_VERSION_1_2;
  for (const char* want : {VK_KHR_STORAGE_BUFFER_STORAGE_CLASS_EXTENSION_NAME, VK_KHR_8BIT_STORAGE_EXTENSION_NAME,
                           VK_KHR_16BIT_STORAGE_EXTENSION_NAME, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME,
                           VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME}) {
    if (info.has_extension(want)) info.enable_extensions.push_back(want);  // re-pointed by the caller
  }
  info.chain_16bit = v11 || info.has_extension(VK_KHR_16BIT_STORAGE_EXTENSION_NAME);
  info.chain_8bit = v12 || info.has_extension(VK_KHR_8BIT_STORAGE_EXTENSION_NAME);
  info.chain_float16_int8 = v12 || info.has_extension(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);

  VkPhysicalDeviceFeatures base{};
  fns.vkGetPhysicalDeviceFeatures(handle, &base);
  info.enable_features.shaderInt64 = base.shaderInt64;
  info.enable_features.shaderInt16 = base.shaderInt16;
  info.enable_features.shaderFloat64 = base.shaderFloat64;

  bool have2 = fns.vkGetPhysicalDeviceFeatures2 != nullptr && fns.vkGetPhysicalDeviceProperties2 != nullptr && v11;
  if (have2) {
    VkPhysicalDevice16BitStorageFeatures f16{};
    f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
    VkPhysicalDevice8BitStorageFeatures f8{};
    f8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
    VkPhysicalDeviceShaderFloat16Int8Features fi{};
    fi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
    VkPhysicalDeviceFeatures2 f2{};
    f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
    void** next = &f2.pNext;
    auto chain = [&next](auto* s) {
      *next = s;
      next = &s->pNext;
    };
    if (info.chain_16bit) chain(&f16);
    if (info.chain_8bit) chain(&f8);
    if (info.chain_float16_int8) chain(&fi);
    fns.vkGetPhysicalDeviceFeatures2(handle, &f2);
    info.storage_buffer_16bit = f16.storageBuffer16BitAccess;
    info.uniform_16bit = f16.uniformAndStorageBuffer16BitAccess;
    info.push_constant_16bit = f16.storagePushConstant16;
    info.push_constant_8bit = f8.storagePushConstant8;
    info.storage_buffer_8bit = f8.storageBuffer8BitAccess;
    info.uniform_8bit = f8.uniformAndStorageBuffer8BitAccess;
    info.shader_float16 = fi.shaderFloat16;
    info.shader_int8 = fi.shaderInt8;

    VkPhysicalDeviceSubgroupProperties sub{};
    sub.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES;
    VkPhysicalDevicePushDescriptorPropertiesKHR push{};
    push.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PUSH_DESCRIPTOR_PROPERTIES_KHR;
    VkPhysicalDeviceProperties2 p2{};
    p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
    p2.pNext = &sub;
    bool has_push = info.has_extension(VK_KHR_PUSH_DESCRIPTOR_EXTENSION_NAME);
    if (has_push) sub.pNext = &push;
    fns.vkGetPhysicalDeviceProperties2(handle, &p2);
    if (sub.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) {
      info.subgroup_operations = sub.supportedOperations;
      info.subgroup_size = std::max<uint32_t>(1, sub.subgroupSize);
    }
    if (has_push) info.max_push_descriptors = push.maxPushDescriptors;
  }

  for (uint32_t i = 0; i < info.memory.memoryHeapCount; ++i)
    if (info.memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      info.device_local_heap_bytes = std::max<uint64_t>(info.device_local_heap_bytes, info.memory.memoryHeaps[i].size);

  const VkPhysicalDeviceLimits& l = info.props.limits;
  DeviceLimits& d = info.limits;
  d.device_name = info.props.deviceName;
  d.api_version = api;
  d.supported_subgroup_operations = info.subgroup_operations;
  d.max_push_constants_size = l.maxPushConstantsSize;
  d.max_uniform_buffer_range = l.maxUniformBufferRange;
  d.max_num_threads = l.maxComputeWorkGroupInvocations;
  d.thread_warp_size = info.subgroup_size;
  d.max_shared_memory_per_block = l.maxComputeSharedMemorySize;
  for (int i = 0; i < 3; ++i) {
    d.max_workgroup_count[i] = l.maxComputeWorkGroupCount[i];
    d.max_workgroup_size[i] = l.maxComputeWorkGroupSize[i];
  }
  d.min_storage_buffer_offset_alignment = static_cast<int64_t>(l.minStorageBufferOffsetAlignment);
  d.supports_float16 = info.shader_float16;
  d.supports_float64 = base.shaderFloat64;
  d.supports_int8 = info.shader_int8;
  d.supports_int16 = base.shaderInt16;
  d.supports_int64 = base.shaderInt64;
  d.supports_8bit_buffer = info.storage_buffer_8bit;
  d.supports_16bit_buffer = info.storage_buffer_16bit;
  d.supports_push_descriptor = info.max_push_descriptors > 0;
  return true;
}

int num_devices() {
  VulkanInstance* inst = VulkanInstance::get();
  return inst ? inst->num_devices() : 0;
}

std::optional<DeviceLimits> query_device_limits(int device_id) {
  VulkanInstance* inst = VulkanInstance::get();
  if (inst == nullptr || device_id < 0 || device_id >= inst->num_devices()) return std::nullopt;
  return inst->physical(device_id).limits;
}

}  // namespace anvil::vulkan
