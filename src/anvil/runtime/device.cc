// Device names and parsing.
#include "anvil/runtime/device.h"

#include <charconv>
#include <ostream>

#include "anvil/base/error.h"

namespace anvil {
namespace {

struct DeviceName {
  DLDeviceType type;
  std::string_view name;
};

// DLPack 0.8 codes 14 and 15 (oneAPI, WebGPU) are spelled as numbers: Debian's header predates
// them. Hexagon (16) is left out: it lies outside that header's enum range. Canonical names first; aliases after (used for parsing only).
constexpr DeviceName kDeviceNames[] = {
    {kDLCPU, "cpu"},         {kDLCUDA, "cuda"},       {kDLCUDAHost, "cuda_host"},
    {kDLOpenCL, "opencl"},   {kDLVulkan, "vulkan"},   {kDLMetal, "metal"},
    {kDLVPI, "vpi"},         {kDLROCM, "rocm"},       {kDLROCMHost, "rocm_host"},
    {kDLExtDev, "ext_dev"},  {kDLCUDAManaged, "cuda_managed"},
    {DLDeviceType(14), "oneapi"}, {DLDeviceType(15), "webgpu"},
    {kDLCPU, "llvm"},        {kDLCPU, "c"},           {kDLOpenCL, "cl"},
    {kDLCUDA, "gpu"},        {kDLROCM, "hip"},
};

}  // namespace

std::string_view device_type_name(DLDeviceType type) {
  for (const auto& entry : kDeviceNames)
    if (entry.type == type) return entry.name;
  return "unknown";
}

DLDeviceType device_type_from_name(std::string_view name) {
  for (const auto& entry : kDeviceNames)
    if (entry.name == name) return entry.type;
  value_error("unknown device '", name,
              "': expected cpu, cuda, opencl (cl), vulkan, metal, rocm, webgpu, oneapi or ext_dev");
}

Device Device::parse(std::string_view text) {
  std::string_view name = text;
  int32_t id = 0;
  if (size_t colon = text.find(':'); colon != std::string_view::npos) {
    name = text.substr(0, colon);
    std::string_view digits = text.substr(colon + 1);
    auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || id < 0)
      value_error("cannot parse device '", text, "': the part after ':' must be a device index >= 0");
  }
  return {device_type_from_name(name), id};
}

std::string Device::to_string() const { return str_cat(device_type_name(type), ":", id); }

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.to_string(); }

}  // namespace anvil
