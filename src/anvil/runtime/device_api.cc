// The per-device-type registry of DeviceAPI singletons.
#include "anvil/runtime/device_api.h"

#include <array>
#include <atomic>

#include "anvil/base/error.h"
#include "anvil/runtime/device/cpu_device_api.h"
#include "anvil/runtime/device/vulkan/vulkan_device_api.h"

namespace anvil {
namespace {

constexpr int kMaxDeviceType = 64;

std::array<std::atomic<DeviceAPI*>, kMaxDeviceType>& api_table() {
  static std::array<std::atomic<DeviceAPI*>, kMaxDeviceType> table{};
  return table;
}

}  // namespace

std::string_view device_attr_name(DeviceAttr attr) {
  switch (attr) {
#define ANVIL_DEVICE_ATTR(name, text, code) \
  case DeviceAttr::name:                    \
    return text;
#include "anvil/runtime/device_attrs.def"
#undef ANVIL_DEVICE_ATTR
  }
  return "unknown";
}

DeviceAttr device_attr_from_name(std::string_view name) {
#define ANVIL_DEVICE_ATTR(id, text, code) \
  if (name == text) return DeviceAttr::id;
#include "anvil/runtime/device_attrs.def"
#undef ANVIL_DEVICE_ATTR
  value_error("unknown device attribute '", name, "' (e.g. exist, device_name, max_threads_per_block)");
}

DeviceAPI* DeviceAPI::get(DLDeviceType type, bool allow_missing) {
  int index = static_cast<int>(type);
  DeviceAPI* api = (index >= 0 && index < kMaxDeviceType)
                       ? api_table()[index].load(std::memory_order_acquire)
                       : nullptr;
  if (api == nullptr && !allow_missing) {
    register_device_apis();
    if (index >= 0 && index < kMaxDeviceType) api = api_table()[index].load(std::memory_order_acquire);
    if (api == nullptr)
      runtime_error("no device API for device type ", device_type_name(type), " (", index,
                    "): this runtime was built without that backend or its driver is missing");
  }
  return api;
}

void DeviceAPI::set(DLDeviceType type, DeviceAPI* api) {
  int index = static_cast<int>(type);
  ANVIL_ICHECK(index >= 0 && index < kMaxDeviceType, "device type ", index);
  api_table()[index].store(api, std::memory_order_release);
}

void register_device_apis() {
  if (DeviceAPI::get(kDLCPU, /*allow_missing=*/true) == nullptr) DeviceAPI::set(kDLCPU, cpu_device_api());
  vulkan::register_vulkan_device_api();  // when libvulkan.so.1 is present; kExist says if the device is
}

}  // namespace anvil
