// The rpc.Connect session constructor and the packet relay of a multi-hop session (see relay.h).
#include "anvil/rpc/relay.h"

#include <poll.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "anvil/rpc/client.h"
#include "anvil/rpc/log.h"

namespace anvil::rpc {
namespace {

int32_t packet_code(const std::string& body) {
  int32_t code = 0;
  std::memcpy(&code, body.data(), sizeof code);  // recv_packet guarantees at least 4 bytes
  return code;
}

bool is_reply(int32_t code) {
  return code == static_cast<int32_t>(RPCCode::kReturn) || code == static_cast<int32_t>(RPCCode::kException) ||
         code == static_cast<int32_t>(RPCCode::kCopyAck);
}

// Tells the client that the inner server is gone (best effort: it may be gone too).
void report_lost_hop(Endpoint& client, const NextHop& hop, const std::string& why) {
  try {
    client.send_exception(str_cat("RuntimeError: rpc.Connect: lost the connection to the RPC server at ", hop.where,
                                  " (the next hop of this session): ", why));
  } catch (const Error&) {
  }
}

}  // namespace

NextHop connect_next_hop(std::span<const WireValue> args, const Limits& limits) {
  if (args.size() < 2) {
    type_error(kConnectConstructor, " expects (url, port, key, enable_logging, [next hop's constructor...]) but got ",
               args.size(), " arguments");
  }
  if (args[0].kind != WireKind::kString) type_error(kConnectConstructor, ": url must be a string, not ", args[0].describe());
  if (args[1].kind != WireKind::kInt) type_error(kConnectConstructor, ": port must be an int, not ", args[1].describe());
  const std::string& url = args[0].s;
  int64_t port = args[1].i;
  if (url.empty()) value_error(kConnectConstructor, ": url is empty");
  if (port < 1 || port > 65535) value_error(kConnectConstructor, ": port ", port, " is not in [1, 65535]");
  std::string key;
  if (args.size() > 2) {
    if (args[2].kind != WireKind::kString) type_error(kConnectConstructor, ": key must be a string, not ", args[2].describe());
    key = args[2].s;
  }
  bool logging = false;
  if (args.size() > 3) {
    if (args[3].kind != WireKind::kBool && args[3].kind != WireKind::kInt) {
      type_error(kConnectConstructor, ": enable_logging must be a bool, not ", args[3].describe());
    }
    logging = args[3].i != 0;
  }
  std::span<const WireValue> next_ctor = args.size() > 4 ? args.subspan(4) : std::span<const WireValue>();
  if (!next_ctor.empty() && next_ctor[0].kind != WireKind::kString) {
    type_error(kConnectConstructor, ": the next hop's session constructor name must be a string, not ",
               next_ctor[0].describe());
  }

  std::string where = str_cat(url, ":", port);
  ConnectOptions options;
  options.limits = limits;
  std::string remote_key;
  try {
    Endpoint ep = connect_endpoint(url, static_cast<int>(port), key, 0, options, next_ctor, &remote_key);
    log_info("multi-hop session: relaying to the RPC server at ", where, " (key '", remote_key, "')");
    return NextHop{std::move(ep), where, logging};
  } catch (const Error& e) {
    // Not an RPCError, so the client sees the kind of what went wrong ("IOError: ...").
    throw Error(e.kind(), str_cat(kConnectConstructor, ": cannot open a session with the RPC server at ", where, ": ",
                                  e.what()));
  }
}

ServeResult relay_session(Endpoint& client, NextHop& hop) {
  ServeResult result;
  const Limits& limits = client.limits();
  int outstanding = 0;  // client requests the inner server has not answered yet
  for (;;) {
    bool from_client = client.channel().buffered() > 0;
    bool from_hop = hop.endpoint.channel().buffered() > 0;
    if (!from_client && !from_hop) {
      pollfd fds[2] = {{client.channel().read_fd(), POLLIN, 0}, {hop.endpoint.channel().read_fd(), POLLIN, 0}};
      int r = ::poll(fds, 2, limits.idle_timeout_ms);
      if (r < 0) {
        if (errno == EINTR) continue;
        throw ChannelError(str_cat("poll: ", std::strerror(errno)));
      }
      if (r == 0) {
        std::string why = str_cat("no packet from either side for ", limits.idle_timeout_ms, " ms");
        if (outstanding > 0) report_lost_hop(client, hop, why);
        result.clean = false;
        result.reason = str_cat("multi-hop session through ", hop.where, ": ", why);
        return result;
      }
      from_client = fds[0].revents != 0;
      from_hop = fds[1].revents != 0;
    }

    if (from_hop) {
      std::optional<std::string> body;
      std::string why;
      try {
        body = hop.endpoint.recv_packet(limits.stall_timeout_ms);
        if (!body) why = "it closed the connection";
      } catch (const ChannelError& e) {
        why = e.what();
      } catch (const ProtocolError& e) {
        why = str_cat("it broke the protocol: ", e.what());
      }
      if (!body) {
        report_lost_hop(client, hop, why);
        result.clean = false;
        result.reason = str_cat("the next hop ", hop.where, " went away: ", why);
        return result;
      }
      if (is_reply(packet_code(*body)) && outstanding > 0) --outstanding;
      client.send_packet(*body);
    }

    if (from_client) {
      std::optional<std::string> body = client.recv_packet(limits.stall_timeout_ms);
      if (!body) {
        hop.endpoint.close();
        result.reason = "client closed the connection";
        return result;
      }
      int32_t code = packet_code(*body);
      if (hop.logging) {
        log_info("relay to ", hop.where, ": ", rpc_code_name(code), " (", body->size(), " bytes)");
      }
      try {
        hop.endpoint.send_packet(*body);
      } catch (const ChannelError& e) {
        report_lost_hop(client, hop, e.what());
        result.clean = false;
        result.reason = str_cat("the next hop ", hop.where, " went away: ", e.what());
        return result;
      }
      if (code == static_cast<int32_t>(RPCCode::kShutdown)) {
        hop.endpoint.close();
        result.reason = "client sent Shutdown";
        return result;
      }
      if (!is_reply(code)) {
        ++outstanding;
        ++result.requests;
      }
    }
  }
}

}  // namespace anvil::rpc
