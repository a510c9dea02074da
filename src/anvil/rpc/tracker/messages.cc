// Parsing and formatting of tracker messages (see messages.h).
#include "anvil/rpc/tracker/messages.h"

#include "anvil/base/error.h"

namespace anvil::rpc::tracker {
namespace {

[[noreturn]] void reject(const std::string& what) { throw MessageError(what); }

const Json& element(const Json& msg, std::size_t index, std::string_view what) {
  if (index >= msg.size()) reject(str_cat(what, ": missing element ", index));
  return msg[index];
}

std::string string_field(const Json& value, std::string_view what) {
  if (!value.is_string()) reject(str_cat(what, ": expected a string, got ", value.type_name()));
  const auto& text = value.get_ref<const std::string&>();
  if (text.size() > kMaxKeyBytes) reject(str_cat(what, ": ", text.size(), " bytes, limit ", kMaxKeyBytes));
  return text;
}

// Ports arrive as ints (Python) or decimal strings (TVM's C++ server); anything else is junk.
void check_port(const Json& port, std::string_view what) {
  if (port.is_number_integer()) {
    auto value = port.get<int64_t>();
    if (value < 0 || value > 65535) reject(str_cat(what, ": port ", value, " out of range"));
    return;
  }
  if (port.is_string() && port.get_ref<const std::string&>().size() <= 16) return;
  reject(str_cat(what, ": expected a port number, got ", port.dump()));
}

PutRequest parse_put(const Json& msg) {
  PutRequest put;
  put.key = string_field(element(msg, 1, "PUT key"), "PUT key");
  const Json& slot = element(msg, 2, "PUT [port, matchkey]");
  if (!slot.is_array() || slot.size() != 2) reject("PUT: expected [port, matchkey]");
  check_port(slot[0], "PUT");
  put.port = slot[0];
  put.matchkey = string_field(slot[1], "PUT matchkey");
  if (msg.size() >= 4 && !msg[3].is_null()) put.custom_addr = string_field(msg[3], "PUT custom_addr");
  return put;
}

RequestRequest parse_request(const Json& msg) {
  RequestRequest req;
  req.key = string_field(element(msg, 1, "REQUEST key"), "REQUEST key");
  element(msg, 2, "REQUEST user");
  if (msg.size() >= 4) {
    if (!msg[3].is_number()) reject(str_cat("REQUEST priority: expected a number, got ", msg[3].type_name()));
    req.priority = msg[3].get<double>();
  }
  return req;
}

UpdateInfoRequest parse_update_info(const Json& msg) {
  const Json& info = element(msg, 1, "UPDATE_INFO info");
  if (!info.is_object()) reject(str_cat("UPDATE_INFO: expected an object, got ", info.type_name()));
  auto addr = info.find("addr");
  if (addr == info.end() || !addr->is_array() || addr->size() != 2) {
    reject("UPDATE_INFO: expected \"addr\": [ip or null, port]");
  }
  if (!(*addr)[0].is_null()) string_field((*addr)[0], "UPDATE_INFO addr");
  check_port((*addr)[1], "UPDATE_INFO");
  auto key = info.find("key");
  if (key != info.end()) string_field(*key, "UPDATE_INFO key");
  return UpdateInfoRequest{info};
}

}  // namespace

Message parse_message(std::string_view payload) {
  if (payload.empty()) reject("empty message");
  if (json_nesting_depth(payload) > kMaxJsonDepth) reject(str_cat("JSON nested deeper than ", kMaxJsonDepth));
  Json msg = Json::parse(payload.begin(), payload.end(), nullptr, /*allow_exceptions=*/false);
  if (msg.is_discarded()) reject("invalid JSON");
  if (!msg.is_array() || msg.empty()) reject(str_cat("expected a non-empty JSON array, got ", msg.type_name()));
  if (!msg[0].is_number_integer()) reject(str_cat("expected an integer code, got ", msg[0].dump()));
  int64_t code = msg[0].get<int64_t>();
  Message out;
  switch (code) {
    case static_cast<int>(TrackerCode::kPing):
    case static_cast<int>(TrackerCode::kSummary):
    case static_cast<int>(TrackerCode::kGetPendingMatchkeys):
      out.body = EmptyRequest{};
      break;
    case static_cast<int>(TrackerCode::kStop):
      out.body = StopRequest{string_field(element(msg, 1, "STOP key"), "STOP key")};
      break;
    case static_cast<int>(TrackerCode::kPut): out.body = parse_put(msg); break;
    case static_cast<int>(TrackerCode::kRequest): out.body = parse_request(msg); break;
    case static_cast<int>(TrackerCode::kUpdateInfo): out.body = parse_update_info(msg); break;
    default: reject(str_cat("unknown tracker code ", code));
  }
  out.code = static_cast<TrackerCode>(code);
  return out;
}

int32_t read_i32_le(const unsigned char* bytes) {
  uint32_t v = static_cast<uint32_t>(bytes[0]) | (static_cast<uint32_t>(bytes[1]) << 8) |
               (static_cast<uint32_t>(bytes[2]) << 16) | (static_cast<uint32_t>(bytes[3]) << 24);
  return static_cast<int32_t>(v);
}

std::string encode_i32_le(int32_t value) {
  auto v = static_cast<uint32_t>(value);
  std::string out(4, '\0');
  for (int i = 0; i < 4; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xFFu);
  return out;
}

std::string make_frame(std::string_view json_text) {
  std::string out = encode_i32_le(static_cast<int32_t>(json_text.size()));
  out.append(json_text);
  return out;
}

std::string reply_code(TrackerCode code) { return std::to_string(static_cast<int>(code)); }

std::string reply_match(const Json& addr, const Json& port, const std::string& matchkey) {
  return py_dumps(Json::array({0, Json::array({addr, port, matchkey})}));
}

std::string reply_summary(const Json& summary) { return py_dumps(Json::array({0, summary})); }

std::string reply_matchkeys(const std::vector<std::string>& matchkeys) {
  Json list = Json::array();
  for (const auto& key : matchkeys) list.push_back(key);
  return py_dumps(list);
}

}  // namespace anvil::rpc::tracker
