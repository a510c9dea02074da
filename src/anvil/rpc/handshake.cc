// Both sides of the data-plane handshake (see handshake.h and spec §1.2-1.5).
#include "anvil/rpc/handshake.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>

namespace anvil::rpc {
namespace {

void write_i32(Channel& ch, int32_t v, int timeout_ms) { ch.write_all(&v, 4, timeout_ms); }

// Milliseconds left until `deadline`, at least 1 (for writes; reads take the deadline itself).
int ms_left(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)) : 1;
}

void append_i32(std::string& out, int32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

ClientHello parse_client_key(const std::string& key, std::vector<std::string>* warnings) {
  ClientHello hello;
  hello.key = key;
  std::istringstream in(key);
  std::string token;
  in >> token;  // the match key itself
  while (in >> token) {
    hello.options.push_back(token);
    constexpr std::string_view kTimeout = "-timeout=";
    if (!token.starts_with(kTimeout)) continue;
    std::string text = token.substr(kTimeout.size());
    char* end = nullptr;
    double t = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      if (warnings) warnings->push_back(str_cat("ignoring unparseable session timeout '", token, "'"));
      continue;
    }
    if (std::isnan(t) || t < 0) {
      if (warnings) warnings->push_back(str_cat("ignoring session timeout '", token, "': not a number >= 0"));
      continue;
    }
    if (std::isinf(t)) {
      if (warnings) warnings->push_back(str_cat("session timeout '", token, "' is infinite: no session timeout"));
      continue;
    }
    if (t > kMaxSessionTimeoutS) {
      if (warnings) {
        warnings->push_back(str_cat("session timeout '", token, "' exceeds the longest supported, ",
                                    kMaxSessionTimeoutS, " s (about 31 years): using that"));
      }
      t = kMaxSessionTimeoutS;
    }
    if (t > 0) hello.session_timeout = t;
  }
  return hello;
}

std::string check_hello_header(int32_t magic, int32_t keylen, const Limits& limits) {
  if (magic != kRPCMagic) return str_cat("bad magic 0x", std::hex, magic, " (not a TVM RPC client)");
  if (keylen < 0 || static_cast<uint32_t>(keylen) > limits.max_key_bytes) {
    return str_cat("key length ", keylen, " outside [0, ", limits.max_key_bytes, "]");
  }
  return "";
}

HelloAnswer answer_hello(const std::string& key, const std::string& match_key, const std::string& server_key) {
  HelloAnswer a;
  std::string expected = "client:" + match_key;
  std::istringstream in(key);
  std::string first;
  in >> first;
  if (first != expected) {
    append_i32(a.send, kRPCCodeMismatch);
    a.reason = str_cat("mismatched key '", key, "' (expected '", expected, "')");
    return a;
  }
  std::string reply = "server:" + server_key;
  append_i32(a.send, kRPCCodeSuccess);
  append_i32(a.send, static_cast<int32_t>(reply.size()));
  a.send += reply;
  a.ok = true;
  return a;
}

std::optional<ClientHello> accept_handshake(Channel& ch, const std::string& match_key, const std::string& server_key,
                                            const Limits& limits, std::chrono::steady_clock::time_point deadline,
                                            std::string* reason) {
  try {
    int32_t header[2] = {0, 0};
    if (!ch.read_exact_until(&header[0], 4, deadline, /*allow_eof=*/true)) {
      *reason = "peer closed before sending the magic";
      return std::nullopt;
    }
    if (header[0] == kRPCMagic) ch.read_exact_until(&header[1], 4, deadline);
    if (std::string problem = check_hello_header(header[0], header[1], limits); !problem.empty()) {
      *reason = problem;
      return std::nullopt;
    }
    std::string key(static_cast<size_t>(header[1]), '\0');
    if (!key.empty()) ch.read_exact_until(key.data(), key.size(), deadline);
    HelloAnswer answer = answer_hello(key, match_key, server_key);
    ch.write_all(answer.send.data(), answer.send.size(), ms_left(deadline));
    if (!answer.ok) {
      *reason = answer.reason;
      return std::nullopt;
    }
    return parse_client_key(key);
  } catch (const Error& e) {
    *reason = str_cat("handshake failed: ", e.what());
    return std::nullopt;
  }
}

std::string connect_handshake(Channel& ch, const std::string& full_key, const std::string& where,
                              const Limits& limits) {
  int timeout = limits.handshake_timeout_ms;
  write_i32(ch, kRPCMagic, timeout);
  write_i32(ch, static_cast<int32_t>(full_key.size()), timeout);
  if (!full_key.empty()) ch.write_all(full_key.data(), full_key.size(), timeout);
  int32_t code = 0;
  // The answer may take long: a proxy answers only once it has paired us with a server, and a
  // busy server accepts only after its current session (TVM's client waits without limit).
  // The first byte may wait for a busy server; from it on, the whole reply has one deadline.
  auto* code_bytes = reinterpret_cast<char*>(&code);
  if (!ch.read_exact(code_bytes, 1, std::max(timeout, limits.idle_timeout_ms), timeout, /*allow_eof=*/true)) {
    throw RPCError(ErrorKind::kIO, str_cat(where, " closed the connection during the handshake"));
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout);
  if (!ch.read_exact_until(code_bytes + 1, 3, deadline, /*allow_eof=*/true)) {
    throw RPCError(ErrorKind::kIO, str_cat(where, " closed the connection during the handshake"));
  }
  std::string key = full_key.starts_with("client:") ? full_key.substr(7) : full_key;
  if (code == kRPCCodeMismatch) {
    throw RPCError(ErrorKind::kRuntime, str_cat("URL ", where, " cannot find server that matches key=", key));
  }
  if (code == kRPCCodeDuplicate) {
    throw RPCError(ErrorKind::kRuntime, str_cat("URL ", where, " server already have key=", key));
  }
  if (code != kRPCCodeSuccess) throw RPCError(ErrorKind::kRuntime, str_cat("URL ", where, " is not TVM RPC server"));
  int32_t len = 0;
  ch.read_exact_until(&len, 4, deadline);
  if (len < 0 || static_cast<uint32_t>(len) > limits.max_key_bytes) {
    throw ProtocolError(str_cat(where, " sent a server key of ", len, " bytes"));
  }
  std::string remote(static_cast<size_t>(len), '\0');
  if (len > 0) ch.read_exact_until(remote.data(), remote.size(), deadline);
  return remote;
}

std::string client_key_string(const std::string& key, double session_timeout) {
  std::string out = "client:" + key;
  if (session_timeout > 0) {
    std::ostringstream t;
    t << session_timeout;
    out += " -timeout=" + t.str();
  }
  return out;
}

}  // namespace anvil::rpc
