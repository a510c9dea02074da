// The Vulkan instance singleton: creation, validation layer and debug messenger, device order.
#include "anvil/runtime/device/vulkan/vulkan_instance.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_env.h"

namespace anvil::vulkan {
namespace {

std::atomic<int64_t> g_validation_errors{0};
std::atomic<bool> g_shut_down{false};
std::atomic<VulkanInstance*> g_instance{nullptr};

VKAPI_ATTR VkBool32 VKAPI_CALL debug_callback(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                              VkDebugUtilsMessageTypeFlagsEXT,
                                              const VkDebugUtilsMessengerCallbackDataEXT* data, void*) {
  const char* msg = data && data->pMessage ? data->pMessage : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    g_validation_errors.fetch_add(1);
    std::fprintf(stderr, "[anvil vulkan validation error] %s\n", msg);
  } else {
    std::fprintf(stderr, "[anvil vulkan validation warning] %s\n", msg);
  }
  return VK_FALSE;
}

VkDebugUtilsMessengerCreateInfoEXT messenger_info() {
  VkDebugUtilsMessengerCreateInfoEXT info{};
  info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = debug_callback;
  return info;
}

int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

}  // namespace

int64_t validation_error_count() { return g_validation_errors.load(); }

bool VulkanInstance::alive() { return !g_shut_down.load(); }

VulkanInstance* VulkanInstance::get() {
  if (g_shut_down.load()) return nullptr;
  // Function-local static: destroyed at exit (waits for the devices, destroys everything).
  static VulkanInstance instance;
  g_instance.store(&instance);
  return &instance;
}

VulkanInstance* VulkanInstance::existing() { return g_shut_down.load() ? nullptr : g_instance.load(); }

VulkanInstance::VulkanInstance() {
  try {
    if (!load_vulkan_library(&fns_, &why_)) return;
    create_instance();
    enumerate_devices();
    if (physical_.empty() && why_.empty()) why_ = "the Vulkan loader lists no device with a compute queue";
  } catch (const Error& e) {
    why_ = e.what();
    physical_.clear();
  }
}

void VulkanInstance::create_instance() {
  if (fns_.vkEnumerateInstanceVersion) {
    uint32_t v = VK_API_VERSION_1_0;
    if (fns_.vkEnumerateInstanceVersion(&v) == VK_SUCCESS) api_version_ = v;
  }
  uint32_t request = std::min<uint32_t>(api_version_, VK_API_VERSION_1_3);

  uint32_t n = 0;
  fns_.vkEnumerateInstanceExtensionProperties(nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  fns_.vkEnumerateInstanceExtensionProperties(nullptr, &n, exts.data());
  auto has_ext = [&](const char* name) {
    return std::any_of(exts.begin(), exts.end(),
                       [&](const auto& e) { return std::strcmp(e.extensionName, name) == 0; });
  };
  std::vector<const char*> enable_exts;
  std::vector<const char*> layers;
  if (request < VK_API_VERSION_1_1 && has_ext(VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME))
    enable_exts.push_back(VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);

  bool validation = env_flag("ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS", "TVM_VULKAN_ENABLE_VALIDATION_LAYERS");
  bool debug_utils = false, validation_features = false;
  if (validation) {
    fns_.vkEnumerateInstanceLayerProperties(&n, nullptr);
    std::vector<VkLayerProperties> props(n);
    fns_.vkEnumerateInstanceLayerProperties(&n, props.data());
    for (const char* want : {"VK_LAYER_KHRONOS_validation", "VK_LAYER_LUNARG_standard_validation"}) {
      if (std::any_of(props.begin(), props.end(), [&](const auto& p) { return std::strcmp(p.layerName, want) == 0; })) {
        layers.push_back(want);
        break;
      }
    }
    if (layers.empty())
      std::fprintf(stderr,
                   "anvil vulkan: validation layers requested but VK_LAYER_KHRONOS_validation is not installed\n");
    debug_utils = has_ext(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (debug_utils) enable_exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    if (!layers.empty()) {
      // The layer's own extensions: VK_EXT_validation_features turns on synchronization
      // validation (missing barriers between dispatches and copies are errors too).
      uint32_t nl = 0;
      fns_.vkEnumerateInstanceExtensionProperties(layers[0], &nl, nullptr);
      std::vector<VkExtensionProperties> layer_exts(nl);
      fns_.vkEnumerateInstanceExtensionProperties(layers[0], &nl, layer_exts.data());
      layer_exts.resize(nl);
      validation_features = std::any_of(layer_exts.begin(), layer_exts.end(), [](const auto& e) {
        return std::strcmp(e.extensionName, VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME) == 0;
      });
      if (validation_features) enable_exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
    }
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "anvil";
  app.pEngineName = "anvil";
  app.apiVersion = request;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(enable_exts.size());
  info.ppEnabledExtensionNames = enable_exts.data();
  VkDebugUtilsMessengerCreateInfoEXT dbg = messenger_info();
  if (debug_utils) info.pNext = &dbg;  // also reports on vkCreateInstance / vkDestroyInstance
  VkValidationFeatureEnableEXT sync = VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT;
  VkValidationFeaturesEXT features{};
  features.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT;
  features.enabledValidationFeatureCount = 1;
  features.pEnabledValidationFeatures = &sync;
  if (validation_features) {
    features.pNext = info.pNext;
    info.pNext = &features;
  }
  vk_check(fns_.vkCreateInstance(&info, nullptr, &instance_), "vkCreateInstance");
  api_version_ = request;
  load_instance_functions(instance_, &fns_);
  if (debug_utils && fns_.vkCreateDebugUtilsMessengerEXT)
    vk_check(fns_.vkCreateDebugUtilsMessengerEXT(instance_, &dbg, nullptr, &messenger_),
             "vkCreateDebugUtilsMessengerEXT");
}

void VulkanInstance::enumerate_devices() {
  uint32_t n = 0;
  vk_check(fns_.vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(n);
  vk_check(fns_.vkEnumeratePhysicalDevices(instance_, &n, handles.data()), "vkEnumeratePhysicalDevices");
  handles.resize(n);
  for (VkPhysicalDevice h : handles) {
    PhysicalDeviceInfo info;
    if (describe_physical_device(fns_, h, api_version_, &info)) physical_.push_back(std::move(info));
  }
  std::stable_sort(physical_.begin(), physical_.end(), [](const auto& a, const auto& b) {
    return type_rank(a.props.deviceType) < type_rank(b.props.deviceType);
  });
  std::string pick = env_string("ANVIL_VULKAN_DEVICE");
  if (!pick.empty()) {
    char* end = nullptr;
    long id = std::strtol(pick.c_str(), &end, 10);
    if (end == pick.c_str() || *end != '\0' || id < 0 || id >= static_cast<long>(physical_.size())) {
      std::fprintf(stderr, "anvil vulkan: ANVIL_VULKAN_DEVICE=%s is not a device index below %zu; ignored\n",
                   pick.c_str(), physical_.size());
    } else {
      PhysicalDeviceInfo chosen = std::move(physical_[static_cast<size_t>(id)]);
      physical_.clear();
      physical_.push_back(std::move(chosen));
    }
  }
  // enable_extensions point into extensions: fix them up after the moves above.
  for (PhysicalDeviceInfo& p : physical_) {
    std::vector<std::string> names;
    for (const char* e : p.enable_extensions) names.emplace_back(e);
    p.enable_extensions.clear();
    for (const std::string& name : names)
      for (const std::string& e : p.extensions)
        if (e == name) p.enable_extensions.push_back(e.c_str());
  }
  devices_.resize(physical_.size());
}

VulkanDevice& VulkanInstance::device(int id) {
  if (id < 0 || id >= num_devices())
    runtime_error("vulkan:", id, " does not exist (", num_devices(), " Vulkan device(s)", why_.empty() ? "" : ": ",
                  why_, ")");
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = devices_[static_cast<size_t>(id)];
  if (!slot) slot = std::make_unique<VulkanDevice>(*this, physical_[static_cast<size_t>(id)], id);
  return *slot;
}

VulkanDevice* VulkanInstance::created_device(int id) {
  if (id < 0 || id >= num_devices()) return nullptr;
  std::lock_guard<std::mutex> lock(mu_);
  return devices_[static_cast<size_t>(id)].get();
}

VulkanInstance::~VulkanInstance() {
  g_shut_down.store(true);
  devices_.clear();  // each waits for its queue and destroys its objects
  if (messenger_ != VK_NULL_HANDLE) fns_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_ != VK_NULL_HANDLE) fns_.vkDestroyInstance(instance_, nullptr);
  int64_t errors = g_validation_errors.load();
  if (messenger_ != VK_NULL_HANDLE && errors > 0)
    std::fprintf(stderr, "[anvil vulkan validation error] %lld validation error(s) in this process\n",
                 static_cast<long long>(errors));
}

}  // namespace anvil::vulkan
