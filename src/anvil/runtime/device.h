// Device: a DLPack DLDevice (kind + ordinal) with TVM's names ("cpu", "cuda", "vulkan", ...),
// listed once in device_types.def.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace anvil {

struct Device {
  DLDeviceType type = kDLCPU;
  int32_t id = 0;

  static Device cpu(int32_t id = 0) { return {kDLCPU, id}; }
  static Device cuda(int32_t id = 0) { return {kDLCUDA, id}; }
  static Device opencl(int32_t id = 0) { return {kDLOpenCL, id}; }
  static Device vulkan(int32_t id = 0) { return {kDLVulkan, id}; }
  static Device from_dl(DLDevice d) { return {d.device_type, d.device_id}; }

  // "cpu", "cpu:0", "cuda:1", "vulkan", "cl"... Throws ValueError for unknown names.
  static Device parse(std::string_view text);

  DLDevice dl() const { return {type, id}; }
  std::string to_string() const;  // "cpu:0"
  bool operator==(const Device& o) const { return type == o.type && id == o.id; }
};

// One row of device_types.def: a DLPack device code and a name for it.
struct DeviceTypeName {
  int32_t code;
  std::string_view name;
  bool alias;  // false: the canonical name of `code` (printing); true: accepted when parsing
};
// Every row of device_types.def, canonical names first (the table Python reads).
std::span<const DeviceTypeName> device_type_names();

// The largest value this build's DLDeviceType can hold: the DLPack header's enumerators end at
// kDLCUDAManaged (13), so its values are those of a 4-bit field (device.cc checks the header).
// Also the bound of device types on the RPC wire (rpc/protocol.h).
inline constexpr int32_t kMaxDeviceTypeCode = 15;

// Whether `code` is a device type of the table that this build's DLDeviceType can hold (every
// code but Hexagon's 16; see device_types.def). The check for codes read from outside.
bool device_type_fits(int32_t code);

// "cpu", "cuda", "cuda_host", "opencl", "vulkan", "metal", "rocm", "ext_dev", "webgpu", ...;
// "unknown" for a code the table lacks.
std::string_view device_type_name(DLDeviceType type);
// The canonical name of a DLPack code (also "hexagon" for 16); "unknown" otherwise.
std::string_view device_code_name(int32_t code);
// Accepts the names above plus TVM's aliases ("llvm", "cl", "gpu"); throws ValueError otherwise
// (also for "hexagon", which a DLDeviceType cannot hold here).
DLDeviceType device_type_from_name(std::string_view name);

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace anvil
