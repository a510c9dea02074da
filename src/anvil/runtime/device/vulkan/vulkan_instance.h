// The process's Vulkan instance and its physical devices, created on first use: the loader is
// opened, the instance made (with the validation layer and a debug messenger when
// ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS=1), and the devices with a compute queue listed,
// discrete GPUs first, then integrated, virtual and CPU ones (ANVIL_VULKAN_DEVICE=N keeps only
// the N-th). Logical devices (vulkan_device.h) are made lazily per device. Everything is
// destroyed at exit; afterwards alive() is false and frees become no-ops.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/device/vulkan/vulkan_loader.h"

namespace anvil::vulkan {

class VulkanDevice;

// What the runtime learnt about one physical device and will enable on its logical device.
struct PhysicalDeviceInfo {
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props{};
  VkPhysicalDeviceMemoryProperties memory{};
  uint32_t queue_family = 0;
  std::vector<std::string> extensions;         // device extensions it offers
  std::vector<const char*> enable_extensions;  // those the runtime enables (point into extensions)
  VkPhysicalDeviceFeatures enable_features{};  // shaderInt64/Int16/Float64 when offered
  bool storage_buffer_8bit = false, uniform_8bit = false, storage_buffer_16bit = false, uniform_16bit = false;
  bool push_constant_16bit = false, push_constant_8bit = false;
  bool shader_float16 = false, shader_int8 = false;
  bool chain_16bit = false, chain_8bit = false, chain_float16_int8 = false;  // structs the device knows
  uint32_t max_push_descriptors = 0;                                         // 0: no VK_KHR_push_descriptor
  uint32_t subgroup_size = 1;
  uint32_t subgroup_operations = 0;
  uint64_t device_local_heap_bytes = 0;
  DeviceLimits limits;
  bool has_extension(std::string_view name) const;
};

// Fills a PhysicalDeviceInfo (properties, features, extensions, limits); false when the device
// has no compute queue (it is then skipped). Defined in vulkan_physical_device.cc.
bool describe_physical_device(const InstanceFunctions& fns, VkPhysicalDevice handle, uint32_t instance_api,
                              PhysicalDeviceInfo* info);

class VulkanInstance {
 public:
  // The instance, created on the first call (never throws: a failure leaves it without devices
  // and why_unavailable() says why). Null after shutdown began.
  static VulkanInstance* get();
  // The instance when get() has made it (and shutdown has not begun), else null; never creates.
  static VulkanInstance* existing();
  // False once exit-time destruction has begun.
  static bool alive();

  ~VulkanInstance();
  VulkanInstance(const VulkanInstance&) = delete;
  VulkanInstance& operator=(const VulkanInstance&) = delete;

  int num_devices() const { return static_cast<int>(physical_.size()); }
  const PhysicalDeviceInfo& physical(int id) const { return physical_[static_cast<size_t>(id)]; }
  // The logical device, created on first use; RuntimeError naming the id when it does not exist.
  VulkanDevice& device(int id);
  // The logical device when already created, else null.
  VulkanDevice* created_device(int id);
  const InstanceFunctions& fns() const { return fns_; }
  VkInstance handle() const { return instance_; }
  bool validation_enabled() const { return messenger_ != VK_NULL_HANDLE; }
  const std::string& why_unavailable() const { return why_; }

 private:
  VulkanInstance();
  void create_instance();
  void enumerate_devices();

  InstanceFunctions fns_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  uint32_t api_version_ = VK_API_VERSION_1_0;
  std::string why_;
  std::vector<PhysicalDeviceInfo> physical_;
  std::mutex mu_;
  std::vector<std::unique_ptr<VulkanDevice>> devices_;
};

// Validation messages of severity error seen so far (the debug messenger counts them).
int64_t validation_error_count();

}  // namespace anvil::vulkan
