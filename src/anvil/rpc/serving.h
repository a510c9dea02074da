// The server's packet loop for one connection (TVM's RPCCode state machine, spec §2.6): waits
// for kInitServer, then answers calls, syscalls and copies from a LocalSession until kShutdown
// or a clean close. Errors of a request go back as kException and the session goes on; a
// malformed packet, an oversized length, a timeout or a broken stream end the connection with
// a reason — never the process. A kInitServer with the session constructor rpc.Connect turns the
// rest of the connection into a relay to the next hop (relay.h).
#pragma once

#include <string>

#include "anvil/rpc/endpoint.h"

namespace anvil::rpc {

struct ServeResult {
  bool clean = true;   // kShutdown or a close between packets
  std::string reason;  // what ended the session, for the log
  int requests = 0;    // packets answered
};

// Serves `ep` until the session ends. `loop_name` appears in protocol-version errors as TVM's
// does ("SockServerLoop"). Calls the optional globals "tvm.rpc.server.start" before the first
// packet and "tvm.rpc.server.shutdown" after kShutdown.
ServeResult serve_connection(Endpoint& ep, const std::string& loop_name = "SockServerLoop");

}  // namespace anvil::rpc
