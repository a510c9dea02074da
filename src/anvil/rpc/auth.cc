// The auth-token challenge-response (see auth.h for the wire format).
#include "anvil/rpc/auth.h"

#include <sys/random.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {
namespace {

constexpr std::string_view kClientLabel = "anvil-rpc-auth-v1 client";
constexpr std::string_view kServerLabel = "anvil-rpc-auth-v1 server";
constexpr uint64_t kClientAnswerBytes = 4 + kAuthNonceBytes + 32;
constexpr uint64_t kServerProofBytes = 4 + 32;
// The largest first packet the server reads while waiting for the answer (a TVM client's
// InitServer is a few dozen bytes).
constexpr uint64_t kMaxFirstPacket = 4096;

Sha256Digest proof(std::string_view label, std::string_view token, std::string_view ns, std::string_view nc) {
  std::string message;
  message.reserve(label.size() + ns.size() + nc.size());
  message.append(label).append(ns).append(nc);
  return hmac_sha256(token, message);
}

int ms_left(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return left.count() > 0 ? static_cast<int>(std::min<int64_t>(left.count(), INT32_MAX)) : 1;
}

AuthVerdict refusal(std::string reason, const std::string& message) {
  AuthVerdict v;
  v.reason = std::move(reason);
  v.send = frame_packet(exception_body(str_cat("RuntimeError: ", message)));
  return v;
}

void send_best_effort(Channel& ch, const std::string& bytes) {
  if (bytes.empty()) return;
  try {
    ch.write_all(bytes.data(), bytes.size(), 1000);
  } catch (const Error&) {
    // The peer may be gone; the log has the reason.
  }
}

}  // namespace

std::string random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      io_error("getrandom: ", std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return out;
}

Sha256Digest client_auth_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return proof(kClientLabel, token, server_nonce, client_nonce);
}

Sha256Digest server_auth_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce) {
  return proof(kServerLabel, token, server_nonce, client_nonce);
}

std::string auth_nonce_option(std::string_view server_nonce) {
  return str_cat(" ", kAuthNonceOption, to_hex(server_nonce));
}

std::optional<std::string> find_auth_nonce(std::string_view server_key) {
  size_t pos = 0;
  while (pos < server_key.size()) {
    size_t start = server_key.find_first_not_of(" \t\r\n", pos);
    if (start == std::string_view::npos) break;
    size_t end = server_key.find_first_of(" \t\r\n", start);
    if (end == std::string_view::npos) end = server_key.size();
    std::string_view token = server_key.substr(start, end - start);
    if (token.starts_with(kAuthNonceOption)) {
      std::string nonce;
      std::string_view hex = token.substr(kAuthNonceOption.size());
      if (!from_hex(hex, &nonce) || nonce.size() != kAuthNonceBytes) {
        throw ProtocolError(str_cat("malformed auth nonce in the server key '", server_key, "'"));
      }
      return nonce;
    }
    pos = end;
  }
  return std::nullopt;
}

std::optional<AuthVerdict> check_auth_length(uint64_t length) {
  if (length >= 4 && length <= kMaxFirstPacket) return std::nullopt;
  return refusal(str_cat("authentication failed: the client's first packet has ", length, " bytes"),
                 "this RPC server requires an auth token; the client did not authenticate");
}

AuthVerdict check_auth_answer(std::string_view body, std::string_view token, std::string_view server_nonce) {
  if (std::optional<AuthVerdict> bad = check_auth_length(body.size())) return *bad;
  int32_t code = 0;
  std::memcpy(&code, body.data(), 4);
  if (code != kAuthCode) {
    bool init = code == static_cast<int32_t>(RPCCode::kInitServer);
    return refusal(str_cat("authentication failed: the client sent ", init ? "InitServer" : rpc_code_name(code),
                           " without answering the auth challenge (an Apache TVM client, or an Anvil client without "
                           "an auth token)"),
                   "this RPC server requires an auth token (anvil-rpc server --auth-token): connect with an Anvil "
                   "client and its auth_token; Apache TVM clients cannot authenticate");
  }
  if (body.size() != kClientAnswerBytes) {
    return refusal(str_cat("authentication failed: malformed answer of ", body.size(), " bytes"),
                   "malformed authentication answer");
  }
  std::string_view client_nonce = body.substr(4, kAuthNonceBytes);
  std::string_view answer = body.substr(4 + kAuthNonceBytes, 32);
  Sha256Digest expected = client_auth_proof(token, server_nonce, client_nonce);
  if (!constant_time_equal(answer, digest_view(expected))) {
    return refusal("authentication failed: wrong auth token", "authentication failed: wrong auth token");
  }
  Writer w;
  w.u64(kServerProofBytes);
  w.i32(kAuthCode);
  w.raw(digest_view(server_auth_proof(token, server_nonce, client_nonce)));
  AuthVerdict v;
  v.ok = true;
  v.send = w.buffer();
  return v;
}

bool server_authenticate(Channel& ch, std::string_view token, std::string_view server_nonce,
                         std::chrono::steady_clock::time_point deadline, std::string* reason) {
  try {
    uint64_t length = 0;
    if (!ch.read_exact_until(&length, 8, deadline, /*allow_eof=*/true)) {
      *reason = "authentication failed: the client closed the connection instead of answering the challenge";
      return false;
    }
    if (std::optional<AuthVerdict> bad = check_auth_length(length)) {
      *reason = bad->reason;
      send_best_effort(ch, bad->send);
      return false;
    }
    std::string body(static_cast<size_t>(length), '\0');
    ch.read_exact_until(body.data(), body.size(), deadline);
    AuthVerdict v = check_auth_answer(body, token, server_nonce);
    if (!v.ok) {
      *reason = v.reason;
      send_best_effort(ch, v.send);
      return false;
    }
    ch.write_all(v.send.data(), v.send.size(), ms_left(deadline));
    return true;
  } catch (const Error& e) {
    *reason = str_cat("authentication failed: ", e.what());
    return false;
  }
}

void client_authenticate(Channel& ch, std::string_view token, std::string_view server_key, const std::string& where,
                         const Limits& limits) {
  std::optional<std::string> server_nonce = find_auth_nonce(server_key);
  if (!server_nonce) {
    if (token.empty()) return;
    throw RPCError(ErrorKind::kRuntime,
                   str_cat("RPC server ", where, " offers no authentication, but this client has an auth token "
                                              "(argument or $", kAuthTokenEnv,
                           "): refusing to use a server that cannot prove it knows the token"));
  }
  if (token.empty()) {
    throw RPCError(ErrorKind::kRuntime, str_cat("RPC server ", where, " requires an auth token: pass auth_token (or set $",
                                                kAuthTokenEnv, ")"));
  }
  std::string client_nonce = random_bytes(kAuthNonceBytes);
  Writer w;
  w.u64(kClientAnswerBytes);
  w.i32(kAuthCode);
  w.raw(client_nonce);
  w.raw(digest_view(client_auth_proof(token, *server_nonce, client_nonce)));
  ch.write_all(w.buffer().data(), w.buffer().size(), limits.handshake_timeout_ms);

  // One deadline for the whole reply, however slowly its bytes arrive (issue #10 item 1).
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.handshake_timeout_ms);
  uint64_t length = 0;
  if (!ch.read_exact_until(&length, 8, deadline, /*allow_eof=*/true)) {
    throw RPCError(ErrorKind::kIO, str_cat(where, " closed the connection during authentication"));
  }
  constexpr uint64_t kMaxAuthReplyBytes = 64 * 1024;  // the proof, or an exception's message
  if (length < 4 || length > kMaxAuthReplyBytes) {
    throw ProtocolError(str_cat(where, " sent an authentication reply of ", length, " bytes (expected 4..",
                                kMaxAuthReplyBytes, ")"));
  }
  std::optional<std::string> body(std::string(static_cast<size_t>(length), '\0'));
  ch.read_exact_until(body->data(), body->size(), deadline);
  Reader r(*body, "auth reply");
  int32_t code = r.i32("code");
  if (code == static_cast<int32_t>(RPCCode::kException)) {
    std::vector<WireValue> seq = read_seq(r, limits);
    throw_remote_error(!seq.empty() && seq[0].kind == WireKind::kString ? seq[0].s : "authentication refused");
  }
  if (code != kAuthCode || body->size() != kServerProofBytes) {
    throw ProtocolError(str_cat(where, " sent a malformed authentication reply (code ", code, ", ", body->size(),
                                " bytes)"));
  }
  std::string_view proof_bytes = r.raw(32, "server proof");
  if (!constant_time_equal(proof_bytes, digest_view(server_auth_proof(token, *server_nonce, client_nonce)))) {
    throw RPCError(ErrorKind::kRuntime,
                   str_cat("RPC server ", where, " failed to prove it knows the auth token: not the server you meant?"));
  }
}

std::string resolve_client_token(const std::optional<std::string>& explicit_token) {
  if (explicit_token) return *explicit_token;
  const char* env = std::getenv(kAuthTokenEnv);
  return env != nullptr ? env : "";
}

}  // namespace anvil::rpc
