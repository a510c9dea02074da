// The tracker's protocol logic without sockets: connections by id, one PriorityScheduler per
// device key, the replies each request produces, and the clean-up when a connection goes.
// tracker.cc feeds it frames from the network; tests and the fuzz target feed it directly.
// Not thread-safe: the tracker runs it on its one event-loop thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "anvil/rpc/tracker/messages.h"
#include "anvil/rpc/tracker/scheduler.h"

namespace anvil::rpc::tracker {

// Bounds on what one connection may make the tracker hold (hostile or buggy peers).
struct StateLimits {
  std::size_t max_values_per_conn = 1024;    // free-server entries PUT and still queued
  std::size_t max_requests_per_conn = 1024;  // REQUESTs waiting
  std::size_t max_info_bytes = 16 * 1024;    // UPDATE_INFO dict, as JSON text
  std::size_t max_keys = 4096;               // device keys (queues) in the whole tracker
};

// A frame to send: the JSON text, framed by the caller.
struct Outbound {
  ConnId conn = 0;
  std::string text;
};

struct HandleResult {
  std::vector<Outbound> out;
  bool close_sender = false;  // the message was malformed or broke a limit
  std::string close_reason;
  bool stop = false;  // STOP with the right key: shut the tracker down after sending `out`
};

// Counters for /metrics.
struct StateCounters {
  uint64_t messages = 0;
  uint64_t puts = 0;
  uint64_t requests = 0;
  uint64_t matches = 0;
  uint64_t rejected_messages = 0;
  uint64_t values_dropped_on_close = 0;
  uint64_t requests_dropped_on_close = 0;
};

class TrackerState {
 public:
  explicit TrackerState(std::string stop_key, StateLimits limits = {});

  void open(ConnId conn, std::string peer_ip);
  // Handles one frame's payload from `conn` (which must be open).
  HandleResult handle(ConnId conn, std::string_view payload);
  // The connection is gone: its queued servers and its waiting requests leave at once.
  void close(ConnId conn);

  // SUMMARY's dict: {"queue_info": {key: {"free": F, "pending": P}}, "server_info": [...]}.
  Json summary() const;
  const StateCounters& counters() const { return counters_; }
  std::size_t connection_count() const { return conns_.size(); }

 private:
  struct ConnState {
    std::string peer_ip;
    Json info = Json::object();
    std::vector<std::string> pending_matchkeys;  // insertion order, no duplicates
    std::size_t queued_values = 0;
    std::size_t queued_requests = 0;
  };

  HandleResult dispatch(ConnId conn, ConnState& state, const Message& msg);
  // The key's scheduler, created on first use; nullptr when the key limit is reached.
  PriorityScheduler* scheduler_for(const std::string& key);
  void run_schedule(PriorityScheduler& scheduler, HandleResult& result);

  std::string stop_key_;
  StateLimits limits_;
  std::map<ConnId, ConnState> conns_;  // ordered by id = order of arrival, as SUMMARY lists them
  std::vector<std::string> key_order_;  // queue_info lists keys in creation order, as TVM does
  std::unordered_map<std::string, PriorityScheduler> schedulers_;
  StateCounters counters_;
};

}  // namespace anvil::rpc::tracker
