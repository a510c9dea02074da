// The tracker's control-plane messages: framing (i32 little-endian length + JSON), the codes,
// validation of each request's JSON shape, and the replies in TVM's exact text. Pure functions:
// no sockets, so the fuzz target and unit tests drive them directly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "anvil/rpc/tracker/py_json.h"
#include "anvil/rpc/tracker_codes.h"

namespace anvil::rpc::tracker {

// The codes and their names (tracker_codes.def, shared with the server and the proxy).
using rpc::TrackerCode;
using rpc::tracker_code_name;  // "PUT", "REQUEST", ...; "UNKNOWN" otherwise

constexpr int32_t kTrackerMagic = kRPCTrackerMagic;  // tracker_codes.h
constexpr std::size_t kMaxFrameBytes = 1u << 20;     // TVM's MAX_TRACKER_MSG_BYTES
constexpr int kMaxJsonDepth = 32;                    // deeper input is hostile, never TVM's
constexpr std::size_t kMaxKeyBytes = 1024;           // device keys, match keys, addresses

// A request that is not valid JSON or not a shape TVM sends; the connection is closed with
// what() as the logged reason.
class MessageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// [3, key, [port, matchkey], custom_addr?]
struct PutRequest {
  std::string key;
  Json port;  // echoed back as sent: Python servers send an int, C++ ones may send a string
  std::string matchkey;
  std::optional<std::string> custom_addr;
};
// [4, key, user, priority]; user is ignored, as in TVM.
struct RequestRequest {
  std::string key;
  double priority = 1;
};
// [5, {"key": ..., "addr": [ip|null, port], ...}]
struct UpdateInfoRequest {
  Json info;
};
// [2, stop_key]
struct StopRequest {
  std::string stop_key;
};
struct EmptyRequest {};  // PING, SUMMARY, GET_PENDING_MATCHKEYS

struct Message {
  TrackerCode code = TrackerCode::kPing;
  std::variant<EmptyRequest, PutRequest, RequestRequest, UpdateInfoRequest, StopRequest> body;
};

// Parses and validates one frame's payload; throws MessageError.
Message parse_message(std::string_view payload);

// Length-prefixed frame of a JSON text (the text must be ASCII: length = bytes).
std::string make_frame(std::string_view json_text);
// Reads a little-endian i32 from 4 bytes.
int32_t read_i32_le(const unsigned char* bytes);
std::string encode_i32_le(int32_t value);

// Reply texts (unframed).
std::string reply_code(TrackerCode code);                                   // "0" / "-1"
std::string reply_match(const Json& addr, const Json& port, const std::string& matchkey);
std::string reply_summary(const Json& summary);                            // [0, {...}]
std::string reply_matchkeys(const std::vector<std::string>& matchkeys);    // ["k:1", ...]

}  // namespace anvil::rpc::tracker
