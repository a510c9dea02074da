// TVM's text_summary() layout of a tracker SUMMARY (server list + queue table), byte for byte,
// so `anvil-rpc query` prints what `python -m tvm.exec.query_rpc_tracker` prints.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "anvil/rpc/tracker/py_json.h"

namespace anvil::rpc::tracker {

// One server_info entry as printed: "ip:port" and its info key ("server:<key>").
struct ServerRow {
  std::string address;
  std::string key;
};

// server_info entries sorted by key (stable, as Python's sorted).
std::vector<ServerRow> server_rows(const Json& summary);

// Servers per device key, counted as TVM does: key.split(":")[1], so a device key that itself
// contains ':' never matches its queue [quirk kept for identical output].
std::map<std::string, int> server_totals(const Json& summary);

// The text of TrackerSession.text_summary().
std::string text_summary(const Json& summary);

// What query_rpc_tracker prints, including print()'s trailing newlines.
std::string query_output(const std::string& host, int port, const Json& summary);

}  // namespace anvil::rpc::tracker
