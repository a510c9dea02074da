// Tracker framing and the client's REQUEST (see tracker_client.h).
#include "anvil/rpc/tracker_client.h"

#include <nlohmann/json.hpp>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/tracker_codes.h"

namespace anvil::rpc {
namespace {

constexpr int32_t kMaxTrackerMessage = 1 << 20;
constexpr int kForever = 1 << 30;  // ms: REQUEST may wait for a server indefinitely

}  // namespace

Channel tracker_connect(const std::string& host, int port, int timeout_ms) {
  Channel channel = tcp_connect(host, port, timeout_ms);
  int32_t magic = kRPCTrackerMagic;
  channel.write_all(&magic, 4, timeout_ms);
  int32_t echo = 0;
  channel.read_exact(&echo, 4, timeout_ms, timeout_ms);
  if (echo != kRPCTrackerMagic) throw ProtocolError(str_cat(host, ":", port, " is not an RPC tracker"));
  return channel;
}

std::string tracker_exchange(Channel& channel, const std::string& json, int timeout_ms) {
  int write_ms = timeout_ms > 0 ? timeout_ms : kForever;
  auto len = static_cast<int32_t>(json.size());
  channel.write_all(&len, 4, write_ms);
  channel.write_all(json.data(), json.size(), write_ms);
  int32_t reply_len = 0;
  channel.read_exact(&reply_len, 4, write_ms, write_ms);
  if (reply_len <= 0 || reply_len > kMaxTrackerMessage) throw ProtocolError(str_cat("tracker reply of ", reply_len, " bytes"));
  std::string reply(static_cast<size_t>(reply_len), '\0');
  channel.read_exact(reply.data(), reply.size(), write_ms, write_ms);
  return reply;
}

TrackerMatch request_server(const std::string& tracker, const std::string& key, int priority, int wait_ms) {
  HostPort hp = parse_host_port(tracker, "tracker");
  Channel channel = tracker_connect(hp.host, hp.port, 10'000);
  nlohmann::json req = nlohmann::json::array({static_cast<int>(TrackerCode::kRequest), key, "", priority});
  std::string reply;
  try {
    reply = tracker_exchange(channel, req.dump(-1, ' ', true), wait_ms);
  } catch (const std::exception& e) {
    runtime_error("tracker ", tracker, ": no server of key '", key, "' was handed out: ", e.what());
  }
  nlohmann::json j = nlohmann::json::parse(reply, nullptr, false);
  if (j.is_discarded() || !j.is_array() || j.size() != 2 || j[0] != static_cast<int>(TrackerCode::kSuccess) ||
      !j[1].is_array() || j[1].size() != 3 || !j[1][0].is_string() || !j[1][1].is_number_integer() || !j[1][2].is_string())
    runtime_error("tracker ", tracker, ": unexpected answer to REQUEST for key '", key, "': ", reply);
  return {j[1][0].get<std::string>(), j[1][1].get<int>(), j[1][2].get<std::string>()};
}

}  // namespace anvil::rpc
