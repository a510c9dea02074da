// The tracker protocol's framing (i32 length + ASCII JSON, after the magic exchange), shared by
// servers registering (tracker_link.h) and clients asking for a device: request_server sends
// TVM's REQUEST [4, key, "", priority] and waits for [0, [host, port, match_key]], the
// address of a free server of that key and the key to present when connecting to it.
//
//   TrackerMatch m = request_server("127.0.0.1:9190", "rasp4", 1, 60000);
//   RPCSession s = RPCSession::connect(m.host, m.port, m.match_key);
#pragma once

#include <string>

#include "anvil/rpc/transport.h"

namespace anvil::rpc {

// Connects and exchanges the tracker magic; ProtocolError when the peer is no tracker.
Channel tracker_connect(const std::string& host, int port, int timeout_ms);
// One request and its reply (timeout_ms for the reply; <= 0 waits forever, as REQUEST may).
std::string tracker_exchange(Channel& channel, const std::string& json, int timeout_ms);

struct TrackerMatch {
  std::string host;
  int port = 0;
  std::string match_key;
};

// tracker: "host:port". wait_ms: how long to wait for a free server (<= 0: forever).
// RuntimeError naming the tracker and the key on timeout or a refused request.
TrackerMatch request_server(const std::string& tracker, const std::string& key, int priority, int wait_ms);

}  // namespace anvil::rpc
