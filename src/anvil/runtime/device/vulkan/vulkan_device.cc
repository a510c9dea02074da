// The logical device: creation with the features kernels may use, memory, pipelines.
#include "anvil/runtime/device/vulkan/vulkan_device.h"

#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_env.h"
#include "anvil/runtime/device/vulkan/vulkan_stream.h"

namespace anvil::vulkan {

VulkanDevice::VulkanDevice(const VulkanInstance& instance, const PhysicalDeviceInfo& info, int id)
    : id_(id), info_(info) {
  float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = info.queue_family;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;

  VkPhysicalDevice16BitStorageFeatures f16{};
  f16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  f16.storageBuffer16BitAccess = info.storage_buffer_16bit;
  f16.uniformAndStorageBuffer16BitAccess = info.uniform_16bit;
  f16.storagePushConstant16 = info.push_constant_16bit;
  VkPhysicalDevice8BitStorageFeatures f8{};
  f8.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES;
  f8.storageBuffer8BitAccess = info.storage_buffer_8bit;
  f8.uniformAndStorageBuffer8BitAccess = info.uniform_8bit;
  f8.storagePushConstant8 = info.push_constant_8bit;
  VkPhysicalDeviceShaderFloat16Int8Features fi{};
  fi.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  fi.shaderFloat16 = info.shader_float16;
  fi.shaderInt8 = info.shader_int8;
  VkPhysicalDeviceFeatures2 f2{};
  f2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2;
  f2.features = info.enable_features;
  void** next = &f2.pNext;
  auto chain = [&next](auto* s) {
    *next = s;
    next = &s->pNext;
  };
  if (info.chain_16bit) chain(&f16);
  if (info.chain_8bit) chain(&f8);
  if (info.chain_float16_int8) chain(&fi);

  VkDeviceCreateInfo create{};
  create.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  create.queueCreateInfoCount = 1;
  create.pQueueCreateInfos = &queue;
  create.enabledExtensionCount = static_cast<uint32_t>(info.enable_extensions.size());
  create.ppEnabledExtensionNames = info.enable_extensions.data();
  bool use_features2 = instance.fns().vkGetPhysicalDeviceFeatures2 != nullptr && info.chain_16bit;
  if (use_features2) {
    create.pNext = &f2;
  } else {
    create.pEnabledFeatures = &info.enable_features;
  }
  vk_check(instance.fns().vkCreateDevice(info.handle, &create, nullptr, &device_), "vkCreateDevice");
  load_device_functions(instance.fns(), device_, &fn_);
  fn_.vkGetDeviceQueue(device_, info.queue_family, 0, &queue_);

  use_push_descriptor_ = info.max_push_descriptors > 0 && fn_.vkCmdPushDescriptorSetKHR != nullptr &&
                         !env_flag("ANVIL_VULKAN_DISABLE_PUSH_DESCRIPTOR", "TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR");
  VkPipelineCacheCreateInfo cache{};
  cache.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  vk_check(fn_.vkCreatePipelineCache(device_, &cache, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
  default_stream_ = std::make_unique<VulkanStream>(*this);
}

VulkanDevice::~VulkanDevice() {
  std::lock_guard<std::mutex> lock(mu_);
  try {
    default_stream_->sync();
  } catch (const Error&) {
  }
  fn_.vkDeviceWaitIdle(device_);
  for (VulkanStream* s : streams_) delete s;  // streams the user never freed
  streams_.clear();
  default_stream_.reset();
  for (auto& entry : pipelines_) destroy_pipeline(*this, entry.second);
  pipelines_.clear();
  for (VulkanBuffer* b : live_) destroy_buffer(b);
  live_.clear();
  if (staging_) destroy_buffer(staging_);
  fn_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  fn_.vkDestroyDevice(device_, nullptr);
}

uint32_t VulkanDevice::find_memory_type(uint32_t type_bits, bool host_visible) const {
  const VkPhysicalDeviceMemoryProperties& mem = info_.memory;
  int best = -1, best_score = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    int score;
    if (host_visible) {
      if (!(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)) continue;
      score = ((f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT) ? 2 : 0) + ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) ? 1 : 0);
    } else {
      if (!(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) continue;
      score = (f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) ? 0 : 1;
    }
    if (score > best_score) best = static_cast<int>(i), best_score = score;
  }
  if (best < 0)
    runtime_error("vulkan:", id_, ": no ", host_visible ? "host-visible" : "device-local", " memory type for a buffer");
  return static_cast<uint32_t>(best);
}

VulkanBuffer* VulkanDevice::create_buffer(VkDeviceSize nbytes, VkBufferUsageFlags usage, bool host_visible) {
  if (nbytes == 0) nbytes = 1;
  VkBufferCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  info.size = nbytes;
  info.usage = usage;
  info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  auto b = std::make_unique<VulkanBuffer>();
  b->size = nbytes;
  b->device_id = id_;
  VkResult r = fn_.vkCreateBuffer(device_, &info, nullptr, &b->buffer);
  if (r != VK_SUCCESS)
    runtime_error("vulkan:", id_, ": cannot create a buffer of ", nbytes, " bytes: ", vk_result_name(r));
  VkMemoryRequirements req{};
  fn_.vkGetBufferMemoryRequirements(device_, b->buffer, &req);
  VkMemoryAllocateInfo alloc{};
  alloc.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  alloc.allocationSize = req.size;
  try {
    alloc.memoryTypeIndex = find_memory_type(req.memoryTypeBits, host_visible);
  } catch (...) {
    fn_.vkDestroyBuffer(device_, b->buffer, nullptr);
    throw;
  }
  r = fn_.vkAllocateMemory(device_, &alloc, nullptr, &b->memory);
  if (r != VK_SUCCESS) {
    fn_.vkDestroyBuffer(device_, b->buffer, nullptr);
    runtime_error("vulkan:", id_, ": out of memory allocating ", nbytes, " bytes (", vk_result_name(r), ")");
  }
  try {
    vk_check(fn_.vkBindBufferMemory(device_, b->buffer, b->memory, 0), "vkBindBufferMemory");
    if (host_visible) {
      b->coherent =
          info_.memory.memoryTypes[alloc.memoryTypeIndex].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      vk_check(fn_.vkMapMemory(device_, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped), "vkMapMemory");
    }
  } catch (...) {
    b->mapped = nullptr;
    destroy_buffer(b.release());
    throw;
  }
  return b.release();
}

void VulkanDevice::destroy_buffer(VulkanBuffer* b) {
  if (b == nullptr) return;
  if (b->mapped) fn_.vkUnmapMemory(device_, b->memory);
  fn_.vkDestroyBuffer(device_, b->buffer, nullptr);
  fn_.vkFreeMemory(device_, b->memory, nullptr);
  delete b;
}

VulkanBuffer* VulkanDevice::alloc_tensor_buffer(VkDeviceSize nbytes) {
  VulkanBuffer* b = create_buffer(
      nbytes, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      /*host_visible=*/false);
  live_.insert(b);
  return b;
}

void VulkanDevice::free_tensor_buffer(VulkanBuffer* b) {
  if (live_.erase(b) == 0) value_error("vulkan:", id_, ": free of a pointer this device did not allocate");
  // Kernels recorded on the default stream may still use it: it goes when they have run.
  default_stream_->destroy_after_sync(b);
}

VulkanStream* VulkanDevice::create_stream() {
  auto s = std::make_unique<VulkanStream>(*this);
  streams_.insert(s.get());
  return s.release();
}

void VulkanDevice::free_stream(VulkanStream* stream) {
  if (streams_.erase(stream) == 0) value_error("vulkan:", id_, ": free_stream of a stream this device did not make");
  delete stream;
}

bool VulkanDevice::owns_stream(const VulkanStream* stream) const {
  return streams_.count(const_cast<VulkanStream*>(stream)) != 0;
}

VulkanBuffer& VulkanDevice::staging(VkDeviceSize nbytes) {
  VkDeviceSize want = std::min(nbytes, kMaxStagingBytes);
  if (staging_ == nullptr || staging_->size < want) {
    VkDeviceSize size = staging_ ? staging_->size : VkDeviceSize{1} << 16;
    while (size < want) size *= 2;
    size = std::min(size, kMaxStagingBytes);
    if (staging_) destroy_buffer(staging_);
    staging_ = nullptr;
    staging_ = create_buffer(size, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  }
  return *staging_;
}

const VulkanPipeline& VulkanDevice::pipeline(uint64_t module_id, size_t index, const KernelInfo& kernel) {
  auto key = std::make_pair(module_id, index);
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  return pipelines_.emplace(key, create_pipeline(*this, kernel)).first->second;
}

void VulkanDevice::drop_module(uint64_t module_id) {
  auto it = pipelines_.lower_bound(std::make_pair(module_id, size_t{0}));
  if (it == pipelines_.end() || it->first.first != module_id) return;
  default_stream_->sync();
  while (it != pipelines_.end() && it->first.first == module_id) {
    destroy_pipeline(*this, it->second);
    it = pipelines_.erase(it);
  }
}

}  // namespace anvil::vulkan
