// Device: a DLPack DLDevice (kind + ordinal) with TVM's names ("cpu", "cuda", "vulkan", ...).
#pragma once

#include <dlpack/dlpack.h>

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

// "cpu", "cuda", "cuda_host", "opencl", "vulkan", "metal", "rocm", "ext_dev", "webgpu", ...
std::string_view device_type_name(DLDeviceType type);
// Accepts the names above plus TVM's aliases ("llvm", "cl", "gpu"); throws ValueError otherwise.
DLDeviceType device_type_from_name(std::string_view name);

std::ostream& operator<<(std::ostream& os, const Device& d);

}  // namespace anvil
