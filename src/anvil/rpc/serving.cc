// The serving loop (see serving.h). Decoding comes first and is strict: a ProtocolError there
// ends the connection (after a best-effort kException so the client learns why). Execution
// comes second: any exception there becomes the reply.
#include "anvil/rpc/serving.h"

#include "anvil/rpc/local_session.h"
#include "anvil/rpc/relay.h"
#include "anvil/rpc/request.h"
#include "anvil/rpc/log.h"
#include "anvil/runtime/registry.h"

namespace anvil::rpc {
namespace {

void call_hook(const char* name) {
  if (std::optional<Function> hook = Registry::find(name)) hook->call({});
}

// Checks the version and the session constructor of kInitServer (spec §2.6.1). rpc.Connect
// opens the next hop of a multi-hop session (relay.h), returned for the loop to relay to.
std::optional<NextHop> init_server(const Request& q, const std::string& loop_name, const Limits& limits) {
  if (q.version != kProtocolVersion) {
    runtime_error("Server[", loop_name, "]: Client protocol version mismatch with the server  server protocol=",
                  kProtocolVersion, ", client protocol=", q.version);
  }
  if (q.args.empty()) return std::nullopt;
  if (q.args[0].kind != WireKind::kString) {
    type_error("InitServer: the session constructor name must be a string, not ", q.args[0].describe());
  }
  const std::string& ctor = q.args[0].s;
  if (ctor == "rpc.LocalSession" && q.args.size() == 1) return std::nullopt;
  if (ctor == kConnectConstructor) return connect_next_hop(std::span<const WireValue>(q.args).subspan(1), limits);
  not_implemented_error("InitServer: session constructor '", ctor,
                        "' is not supported by the Anvil RPC server (only rpc.LocalSession and rpc.Connect)");
}

}  // namespace

ServeResult serve_connection(Endpoint& ep, const std::string& loop_name) {
  ServeResult result;
  LocalSession session(ep.limits());
  bool initialized = false;
  try {
    call_hook("tvm.rpc.server.start");
    for (;;) {
      std::optional<std::string> body = ep.recv_packet();
      if (!body) {
        result.reason = "client closed the connection";
        return result;
      }
      Request q;
      try {
        q = decode_request(*body, ep.limits());
      } catch (const ProtocolError& e) {
        try {
          ep.send_exception(str_cat("RPCProtocolError: ", e.what()));
        } catch (const Error&) {
        }
        throw;
      }
      if (q.code == static_cast<int32_t>(RPCCode::kShutdown)) {
        call_hook("tvm.rpc.server.shutdown");
        result.reason = "client sent Shutdown";
        return result;
      }
      ++result.requests;
      // Execute; any failure here is the reply, not the end of the session.
      std::string staging;
      std::vector<WireValue> reply;
      std::optional<std::string_view> ack;
      std::optional<std::string> failure;
      std::optional<NextHop> hop;
      try {
        auto code = static_cast<RPCCode>(q.code);
        if (code == RPCCode::kInitServer) {
          if (initialized) runtime_error("Server has already been initialized");
          hop = init_server(q, loop_name, ep.limits());
          initialized = true;
          reply.push_back(WireValue::none());
        } else if (!initialized) {
          runtime_error("the first packet of a session must be InitServer, not ", rpc_code_name(q.code));
        } else if (code == RPCCode::kCallFunc) {
          reply = session.call_function(q.handle, q.args);
        } else if (code == RPCCode::kCopyToRemote) {
          session.copy_to_remote(q.tensor, q.data);
          reply.push_back(WireValue::none());
        } else if (code == RPCCode::kCopyFromRemote) {
          ack = session.copy_from_remote(q.tensor, q.nbytes, &staging);
        } else {
          reply.push_back(session.syscall(code, q.args));
        }
      } catch (const std::exception& e) {
        failure = exception_text(e);
      }
      if (failure) {
        ep.send_exception(*failure);
      } else if (ack) {
        ep.send_copy_ack(*ack);
      } else {
        ep.send_return(reply);
      }
      if (hop) {
        // A multi-hop session: from here on this server only relays (relay.h).
        ServeResult relayed = relay_session(ep, *hop);
        relayed.requests += result.requests;
        return relayed;
      }
    }
  } catch (const ProtocolError& e) {
    result.clean = false;
    result.reason = str_cat("protocol error: ", e.what());
  } catch (const ChannelError& e) {
    result.clean = false;
    result.reason = str_cat("connection error: ", e.what());
  } catch (const std::exception& e) {
    result.clean = false;
    result.reason = str_cat("session error: ", e.what());
  }
  return result;
}

}  // namespace anvil::rpc
