// The Vulkan runtime's environment switches, read in both spellings (ANVIL_VULKAN_X and TVM's
// TVM_VULKAN_X). Flags are on when set to a non-zero integer; unset, empty and "0" are off.
#pragma once

#include <cstdlib>
#include <string>

namespace anvil::vulkan {

inline bool env_flag(const char* anvil_name, const char* tvm_name = nullptr) {
  for (const char* name : {anvil_name, tvm_name}) {
    if (name == nullptr) continue;
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0' && std::atoi(v) != 0) return true;
  }
  return false;
}

// The first non-empty value among the two names, or "".
inline std::string env_string(const char* anvil_name, const char* tvm_name = nullptr) {
  for (const char* name : {anvil_name, tvm_name}) {
    if (name == nullptr) continue;
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return v;
  }
  return "";
}

}  // namespace anvil::vulkan
