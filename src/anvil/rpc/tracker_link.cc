// Server-side tracker registration (see tracker_link.h). Messages are i32 length + ASCII JSON.
#include "anvil/rpc/tracker_link.h"

#include <nlohmann/json.hpp>

#include <cstdio>

#include "anvil/rpc/address.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/tracker_client.h"
#include "anvil/rpc/tracker_codes.h"

namespace anvil::rpc {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kTrackerTimeoutMs = 5000;
constexpr auto kPollInterval = std::chrono::seconds(2);
constexpr auto kReconnectInterval = std::chrono::seconds(5);
// TVM's rule: a key missing from the pending set for more than (4 + 2) / 2 ticks is rotated.
constexpr int kMissingTicksBeforeRotate = 4;

using enum TrackerCode;  // tracker_codes.def

std::string dump(const Json& j) { return j.dump(-1, ' ', /*ensure_ascii=*/true); }

}  // namespace

TrackerLink::TrackerLink(const std::string& tracker, std::string key, int listen_port, std::string custom_addr)
    : key_(std::move(key)), listen_port_(listen_port), custom_addr_(std::move(custom_addr)),
      rng_(std::random_device{}()) {
  HostPort hp = parse_host_port(tracker, "--tracker");
  host_ = hp.host;
  port_ = hp.port;
}

std::string TrackerLink::match_key() const { return match_key_.empty() ? key_ : match_key_; }

void TrackerLink::drop(const std::string& why) {
  log_warning("tracker ", host_, ":", port_, ": ", why, "; reconnecting in 5 s");
  channel_.close();
  next_connect_ = Clock::now() + kReconnectInterval;
}

std::string TrackerLink::request(const std::string& json) { return tracker_exchange(channel_, json, kTrackerTimeoutMs); }

void TrackerLink::connect() {
  channel_ = tracker_connect(host_, port_, kTrackerTimeoutMs);
  Json addr = Json::array({custom_addr_.empty() ? Json(nullptr) : Json(custom_addr_), listen_port_});
  Json info = {{"key", "server:" + key_}, {"addr", addr}};
  std::string reply = request(dump(Json::array({kUpdateInfo, info})));
  if (Json::parse(reply) != Json(kSuccess)) throw ProtocolError(str_cat("UPDATE_INFO answered ", reply));
  log_info("registered with tracker ", host_, ":", port_, " as key '", key_, "'");
  put_new_key();
}

void TrackerLink::put_new_key() {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::string candidate;
  do {
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, "%.16g", unit(rng_));
    candidate = key_ + ":" + suffix;
  } while (used_keys_.count(candidate) > 0);
  used_keys_.insert(candidate);
  Json value = Json::array({listen_port_, candidate});
  Json put = Json::array({kPut, key_, value, custom_addr_.empty() ? Json(nullptr) : Json(custom_addr_)});
  std::string reply = request(dump(put));
  if (Json::parse(reply) != Json(kSuccess)) throw ProtocolError(str_cat("PUT answered ", reply));
  match_key_ = candidate;
  missing_ticks_ = 0;
  next_poll_ = Clock::now() + kPollInterval;
}

void TrackerLink::tick() {
  auto now = Clock::now();
  try {
    if (!channel_.is_open()) {
      if (now < next_connect_) return;
      connect();
      return;
    }
    if (now < next_poll_) return;
    next_poll_ = now + kPollInterval;
    Json pending = Json::parse(request(dump(Json::array({kGetPendingMatchkeys}))));
    if (!pending.is_array()) throw ProtocolError("GET_PENDING_MATCHKEYS did not answer a list");
    bool present = false;
    for (const Json& k : pending) present = present || (k.is_string() && k.get<std::string>() == match_key_);
    missing_ticks_ = present ? 0 : missing_ticks_ + 1;
    if (missing_ticks_ >= kMissingTicksBeforeRotate) {
      // A client was handed this key but never came: offer the server again under a new one.
      log_info("match key ", match_key_, " was not used; putting a new one");
      put_new_key();
    }
  } catch (const std::exception& e) {
    drop(e.what());
  }
}

void TrackerLink::after_session() {
  if (!channel_.is_open()) return;  // the next connect() PUTs a key anyway
  try {
    put_new_key();
  } catch (const std::exception& e) {
    drop(e.what());
  }
}

}  // namespace anvil::rpc
