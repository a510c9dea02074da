// What the tracker's HTTP status port serves: an HTML page (servers and queues, refreshing
// itself), and Prometheus text metrics. Pure rendering from SUMMARY's dict and counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "anvil/rpc/tracker/py_json.h"
#include "anvil/rpc/tracker/tracker_state.h"

namespace anvil::rpc::tracker {

struct MetricsSnapshot {
  StateCounters state;
  uint64_t connections_accepted = 0;
  uint64_t connections_open = 0;
  std::map<std::string, uint64_t> closes_by_reason;  // "eof", "frame_size", "bad_magic", ...
  double uptime_seconds = 0;
};

std::string render_status_html(const Json& summary, int tracker_port);
std::string render_metrics(const Json& summary, const MetricsSnapshot& metrics);

}  // namespace anvil::rpc::tracker
