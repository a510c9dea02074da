// The data-plane handshake (spec §1): magic, key, and the server's reply. The acceptor side
// validates everything it reads within Limits::handshake_timeout_ms; the connector side turns
// the reply codes into TVM's error texts.
// (The handshake has one deadline in all, however slowly its bytes arrive.)
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {

// What an accepted client asked for.
struct ClientHello {
  std::string key;                       // the whole key string, e.g. "client:x1 -timeout=10"
  std::vector<std::string> options;      // whitespace tokens after the first
  std::optional<double> session_timeout;  // from "-timeout=<seconds>", when positive and finite
};

// The longest session timeout honoured, in seconds (about 31.7 years): a larger finite
// "-timeout=" is clamped to it (with a warning), since seconds beyond ~9.2e9 do not fit a
// nanosecond clock. "inf" means no timeout, as 0 does.
inline constexpr double kMaxSessionTimeoutS = 1e9;

// Parses "client:<matchkey> [options]". A -timeout that is not a number, negative, NaN or
// infinite is ignored and one that exceeds kMaxSessionTimeoutS is clamped; each such case is
// listed in *warnings when given.
ClientHello parse_client_key(const std::string& key, std::vector<std::string>* warnings = nullptr);

// The acceptor's steps, for a caller that reads without blocking (admission.h):
// the 8-byte header (magic, key length) is acceptable: "" when it is, else why not.
std::string check_hello_header(int32_t magic, int32_t keylen, const Limits& limits);
// The answer to a complete key: on a match, SUCCESS + "server:<server_key>" (ok); else
// MISMATCH (not ok, `reason` set). `send` holds the bytes to write either way.
struct HelloAnswer {
  bool ok = false;
  std::string send;
  std::string reason;
};
HelloAnswer answer_hello(const std::string& key, const std::string& match_key, const std::string& server_key);

// Acceptor: reads magic + key, all of it by `deadline`. On a match replies SUCCESS and
// "server:<server_key>" and returns the hello. Otherwise returns nullopt with *reason set: bad
// magic or an oversized/short key closes silently; a key whose first token is not "client:<match_key>" gets MISMATCH first.
// ChannelError/ProtocolError never escape: every failure is a reason.
std::optional<ClientHello> accept_handshake(Channel& ch, const std::string& match_key, const std::string& server_key,
                                            const Limits& limits, std::chrono::steady_clock::time_point deadline,
                                            std::string* reason);

// Connector: sends magic and "client:<key>[ -timeout=<t>]" (key given whole, prefix included)
// and returns the server's key. The first byte of the answer may take up to
// limits.idle_timeout_ms (a proxy answers once it has paired us; a busy server after its
// session); the rest, limits.handshake_timeout_ms. Throws RPCError with TVM's texts on MISMATCH/DUPLICATE or a
// reply that is not from an RPC server; ChannelError on I/O failure.
std::string connect_handshake(Channel& ch, const std::string& full_key, const std::string& where,
                              const Limits& limits);

// "client:" + key, plus " -timeout=<t>" when t > 0 (formatted like Python: 10 -> "10", 1.5 -> "1.5").
std::string client_key_string(const std::string& key, double session_timeout);

}  // namespace anvil::rpc
