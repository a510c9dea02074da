// The tracker protocol's magic, and its codes as a C++ enum and a name table from
// tracker_codes.def. Header
// only, so the tracker, the server's tracker link, the proxy and the Python bindings share it
// without a link dependency on one another.
#pragma once

#include <cstdint>
#include <string_view>

namespace anvil::rpc {

// RPC_TRACKER_MAGIC: the first 4 bytes each way of a tracker connection (bytes 71 F2 02 00).
inline constexpr int32_t kRPCTrackerMagic = 0x2F271;

enum class TrackerCode : int {
#define ANVIL_TRACKER_CODE(name, value, text) name = value,
#include "anvil/rpc/tracker_codes.def"
#undef ANVIL_TRACKER_CODE
};

struct TrackerCodeName {
  TrackerCode code;
  std::string_view name;  // TVM's spelling: "PUT", "UPDATE_INFO", ...
};

inline constexpr TrackerCodeName kTrackerCodeNames[] = {
#define ANVIL_TRACKER_CODE(name, value, text) {TrackerCode::name, text},
#include "anvil/rpc/tracker_codes.def"
#undef ANVIL_TRACKER_CODE
};

// "PUT", "REQUEST", ...; "UNKNOWN" for a number that is not a code.
constexpr std::string_view tracker_code_name(int code) {
  for (const TrackerCodeName& entry : kTrackerCodeNames)
    if (static_cast<int>(entry.code) == code) return entry.name;
  return "UNKNOWN";
}

}  // namespace anvil::rpc
