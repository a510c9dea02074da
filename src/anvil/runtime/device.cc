// Device names and parsing.
#include "anvil/runtime/device.h"

#include <charconv>
#include <string>
#include <ostream>

#include "anvil/base/error.h"

namespace anvil {
namespace {

constexpr DeviceTypeName kDeviceNames[] = {
#define ANVIL_DEVICE_TYPE(code, name) {code, name, false},
#define ANVIL_DEVICE_ALIAS(code, name)
#include "anvil/runtime/device_types.def"
#undef ANVIL_DEVICE_TYPE
#undef ANVIL_DEVICE_ALIAS
#define ANVIL_DEVICE_TYPE(code, name)
#define ANVIL_DEVICE_ALIAS(code, name) {code, name, true},
#include "anvil/runtime/device_types.def"
#undef ANVIL_DEVICE_TYPE
#undef ANVIL_DEVICE_ALIAS
};

// kMaxDeviceTypeCode (device.h) follows from the header's last enumerator. A newer header with
// more enumerators fails here, and that bound (and Hexagon's exclusion in device_types.def) can be
// revisited.
static_assert(kDLCUDAManaged == 13, "a new DLPack header: recheck kMaxDeviceTypeCode");

const DeviceTypeName* find_code(int32_t code) {
  for (const auto& entry : kDeviceNames)
    if (!entry.alias && entry.code == code) return &entry;
  return nullptr;
}

std::string expected_names() {
  std::string out;
  for (const auto& entry : kDeviceNames) {
    if (!device_type_fits(entry.code)) continue;
    out += out.empty() ? "" : ", ";
    out += entry.name;
  }
  return out;
}

}  // namespace

std::span<const DeviceTypeName> device_type_names() { return kDeviceNames; }

bool device_type_fits(int32_t code) { return code <= kMaxDeviceTypeCode && find_code(code) != nullptr; }

std::string_view device_code_name(int32_t code) {
  const DeviceTypeName* entry = find_code(code);
  return entry != nullptr ? entry->name : "unknown";
}

std::string_view device_type_name(DLDeviceType type) { return device_code_name(static_cast<int32_t>(type)); }

DLDeviceType device_type_from_name(std::string_view name) {
  for (const auto& entry : kDeviceNames) {
    if (entry.name != name) continue;
    if (!device_type_fits(entry.code))
      value_error("device '", name, "' (DLPack code ", entry.code,
                  ") cannot be held by this build's DLPack DLDeviceType, which ends at ", kMaxDeviceTypeCode);
    return static_cast<DLDeviceType>(entry.code);
  }
  value_error("unknown device '", name, "': expected one of ", expected_names());
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
