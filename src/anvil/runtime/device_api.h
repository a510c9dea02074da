// DeviceAPI: what the runtime needs from one kind of device — memory, copies, streams and
// attribute queries. One singleton per DLPack device type, registered at start-up by
// register_device_apis(); CPU is always there, GPU backends add theirs when their driver loads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "anvil/runtime/data_type.h"
#include "anvil/runtime/device.h"
#include "anvil/runtime/value.h"

namespace anvil {

// Every allocation on every device is aligned to at least this many bytes (cache line, AVX-512).
inline constexpr size_t kAllocAlignment = 64;

using Stream = void*;  // device-specific; nullptr is the default stream

enum class DeviceAttr : int32_t {
#define ANVIL_DEVICE_ATTR(name, text, code) name = code,
#include "anvil/runtime/device_attrs.def"
#undef ANVIL_DEVICE_ATTR
};
std::string_view device_attr_name(DeviceAttr attr);
DeviceAttr device_attr_from_name(std::string_view name);  // throws ValueError

class DeviceAPI {
 public:
  virtual ~DeviceAPI() = default;

  virtual void set_device(Device dev) = 0;
  // Null when the device does not know the attribute.
  virtual Value get_attr(Device dev, DeviceAttr attr) = 0;
  // Throws RuntimeError when the device is out of memory; alignment is a power of two.
  virtual void* alloc(Device dev, size_t nbytes, size_t alignment) = 0;
  virtual void free(Device dev, void* ptr) = 0;
  // Byte copy; either side may be the host (kDLCPU). Pointers are base pointers plus offsets
  // because device memory handles cannot always be offset on the host.
  virtual void copy(const void* from, size_t from_offset, void* to, size_t to_offset, size_t nbytes,
                    Device from_dev, Device to_dev, Stream stream) = 0;
  virtual Stream create_stream(Device dev) = 0;
  virtual void free_stream(Device dev, Stream stream) = 0;
  virtual void sync(Device dev, Stream stream) = 0;

  // The API for a device type; throws RuntimeError naming the device when none is registered
  // (unless allow_missing, which returns nullptr instead).
  static DeviceAPI* get(DLDeviceType type, bool allow_missing = false);
  static DeviceAPI* get(Device dev, bool allow_missing = false) { return get(dev.type, allow_missing); }
  // Backends call this once; the pointer must live for the whole process.
  static void set(DLDeviceType type, DeviceAPI* api);
};

// Registers the device APIs this build has (CPU always). Idempotent.
void register_device_apis();

}  // namespace anvil
