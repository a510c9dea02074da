// Multi-hop sessions: TVM's session constructor rpc.Connect. A client whose kInitServer carries
//   ["rpc.Connect", url, port, key, enable_logging, <the next hop's constructor args>...]
// makes this server a gateway to an internal server it can reach and the client cannot. The
// gateway opens a client connection to url:port (handshake with `key`, the auth challenge with
// $ANVIL_RPC_AUTH_TOKEN when that server asks for one, InitServer with the remaining arguments,
// so hops chain), answers the client's InitServer, and from then on relays whole packets both
// ways without decoding them: handles, tensors, files and errors are the inner server's.
//
// A hop that goes away is reported, not hidden: when the inner server closes or breaks its
// connection, the client gets a kException naming it (the reply to its pending request, or
// what its next request raises) and the gateway ends the session. When the client leaves, the
// gateway closes the inner connection (after relaying kShutdown), so the inner session ends too.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/serving.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {

inline constexpr std::string_view kConnectConstructor = "rpc.Connect";

// The inner end of a multi-hop session.
struct NextHop {
  Endpoint endpoint;
  std::string where;     // "host:port", for messages
  bool logging = false;  // enable_logging: one log line per relayed request
};

// Connects to the next hop for `args`, the constructor's arguments after its name. TypeError
// or ValueError for malformed arguments; the connection's errors (unreachable, wrong key, the
// inner server refusing its InitServer) as RPCError/ChannelError whose text names the hop.
NextHop connect_next_hop(std::span<const WireValue> args, const Limits& limits);

// Relays packets between `client` and `hop` until either side ends. Waits for the next packet
// at most limits.idle_timeout_ms (the same idle limit as an ordinary session).
ServeResult relay_session(Endpoint& client, NextHop& hop);

}  // namespace anvil::rpc
