// The server's side of an RPC proxy (TVM's `rpc_server --through-proxy`, spec §5): dial the
// proxy, introduce ourselves as "server:<key>", and wait until the proxy pairs us with a client
// (or answers DUPLICATE / MISMATCH). The session that follows is an ordinary one over the
// returned channel.
#pragma once

#include <atomic>
#include <string>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {

struct ProxyDial {
  enum Status {
    kPaired,     // channel + client_key are set
    kDuplicate,  // another server already waits at the proxy under this key (TVM exits; we retry)
    kMismatch,   // the proxy gave up waiting for a client (its timeout), or refused the key
    kStopped,    // *stop became true while waiting
    kFailed,     // connection or protocol failure: retry later
  };
  Status status = kFailed;
  Channel channel;
  std::string client_key;  // the client's whole key, e.g. "client:k -timeout=10"
  std::string reason;      // for the log
};

// Connects to host:port, sends magic + `server_key` (e.g. "server:rk3588"), and waits without
// a time limit (TCP keepalive finds a dead proxy) for the pairing; checks *stop every 250 ms.
ProxyDial dial_proxy(const std::string& host, int port, const std::string& server_key, const Limits& limits,
                     const std::atomic<bool>& stop);

}  // namespace anvil::rpc
