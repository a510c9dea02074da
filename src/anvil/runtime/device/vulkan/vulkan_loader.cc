// dlopen of the Vulkan loader and the function tables (vulkan_functions.def).
#include "anvil/runtime/device/vulkan/vulkan_loader.h"

#include <dlfcn.h>

#include <mutex>

#include "anvil/base/error.h"

namespace anvil::vulkan {
namespace {

struct Library {
  void* handle = nullptr;
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  std::string error;
};

const Library& library() {
  static Library lib = [] {
    Library l;
    // Never closed: Vulkan objects are destroyed at exit, after which the ICDs may still run
    // their own exit handlers.
    l.handle = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (l.handle == nullptr) {
      const char* err = dlerror();
      l.error = std::string("cannot open libvulkan.so.1: ") + (err ? err : "unknown error");
      return l;
    }
    l.get_instance_proc_addr = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(l.handle, "vkGetInstanceProcAddr"));
    if (l.get_instance_proc_addr == nullptr) l.error = "libvulkan.so.1 has no vkGetInstanceProcAddr";
    return l;
  }();
  return lib;
}

}  // namespace

bool load_vulkan_library(InstanceFunctions* fns, std::string* why) {
  const Library& lib = library();
  if (lib.get_instance_proc_addr == nullptr) {
    if (why) *why = lib.error;
    return false;
  }
  fns->vkGetInstanceProcAddr = lib.get_instance_proc_addr;
#define ANVIL_VK_GLOBAL(name) \
  fns->name = reinterpret_cast<PFN_##name>(lib.get_instance_proc_addr(VK_NULL_HANDLE, #name));
#define ANVIL_VK_INSTANCE(name)
#define ANVIL_VK_DEVICE(name)
#include "anvil/runtime/device/vulkan/vulkan_functions.def"
  if (!fns->vkCreateInstance || !fns->vkEnumerateInstanceExtensionProperties ||
      !fns->vkEnumerateInstanceLayerProperties) {
    if (why) *why = "libvulkan.so.1 lacks vkCreateInstance";
    return false;
  }
  return true;
}

void load_instance_functions(VkInstance instance, InstanceFunctions* fns) {
#define ANVIL_VK_GLOBAL(name)
#define ANVIL_VK_INSTANCE(name)                                                          \
  fns->name = reinterpret_cast<PFN_##name>(fns->vkGetInstanceProcAddr(instance, #name)); \
  if (fns->name == nullptr) runtime_error("Vulkan instance: missing entry point " #name);
#define ANVIL_VK_INSTANCE_OPT(name) \
  fns->name = reinterpret_cast<PFN_##name>(fns->vkGetInstanceProcAddr(instance, #name));
#define ANVIL_VK_DEVICE(name)
#include "anvil/runtime/device/vulkan/vulkan_functions.def"
}

void load_device_functions(const InstanceFunctions& ifns, VkDevice device, DeviceFunctions* fns) {
#define ANVIL_VK_GLOBAL(name)
#define ANVIL_VK_INSTANCE(name)
#define ANVIL_VK_DEVICE(name)                                                        \
  fns->name = reinterpret_cast<PFN_##name>(ifns.vkGetDeviceProcAddr(device, #name)); \
  if (fns->name == nullptr) runtime_error("Vulkan device: missing entry point " #name);
#define ANVIL_VK_DEVICE_OPT(name) fns->name = reinterpret_cast<PFN_##name>(ifns.vkGetDeviceProcAddr(device, #name));
#include "anvil/runtime/device/vulkan/vulkan_functions.def"
}

const char* vk_result_name(VkResult r) {
  switch (r) {
#define ANVIL_VK_RESULT(x) \
  case x:                  \
    return #x;
    ANVIL_VK_RESULT(VK_SUCCESS)
    ANVIL_VK_RESULT(VK_NOT_READY)
    ANVIL_VK_RESULT(VK_TIMEOUT)
    ANVIL_VK_RESULT(VK_INCOMPLETE)
    ANVIL_VK_RESULT(VK_ERROR_OUT_OF_HOST_MEMORY)
    ANVIL_VK_RESULT(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    ANVIL_VK_RESULT(VK_ERROR_INITIALIZATION_FAILED)
    ANVIL_VK_RESULT(VK_ERROR_DEVICE_LOST)
    ANVIL_VK_RESULT(VK_ERROR_MEMORY_MAP_FAILED)
    ANVIL_VK_RESULT(VK_ERROR_LAYER_NOT_PRESENT)
    ANVIL_VK_RESULT(VK_ERROR_EXTENSION_NOT_PRESENT)
    ANVIL_VK_RESULT(VK_ERROR_FEATURE_NOT_PRESENT)
    ANVIL_VK_RESULT(VK_ERROR_INCOMPATIBLE_DRIVER)
    ANVIL_VK_RESULT(VK_ERROR_TOO_MANY_OBJECTS)
    ANVIL_VK_RESULT(VK_ERROR_FORMAT_NOT_SUPPORTED)
    ANVIL_VK_RESULT(VK_ERROR_FRAGMENTED_POOL)
    ANVIL_VK_RESULT(VK_ERROR_OUT_OF_POOL_MEMORY)
    ANVIL_VK_RESULT(VK_ERROR_INVALID_SHADER_NV)
#undef ANVIL_VK_RESULT
    default:
      return "VK_ERROR_UNKNOWN";
  }
}

void vk_check(VkResult r, const char* what) {
  if (r != VK_SUCCESS) runtime_error("Vulkan: ", what, " failed: ", vk_result_name(r), " (", static_cast<int>(r), ")");
}

}  // namespace anvil::vulkan
