// The optional auth-token challenge-response (beyond TVM; docs/rpc.md "Authentication"): after
// TVM's handshake, client and server prove to each other that they know the same secret token,
// with HMAC-SHA256 over two fresh nonces. It authenticates the start of a connection; it does
// not encrypt or sign the traffic that follows.
//
// Wire format (all integers little-endian):
//   server -> client  in the handshake reply, the server key carries " -auth-nonce=<64 hex>" (Ns)
//   client -> server  u64 68, i32 kAuthCode, Nc (32 bytes), HMAC(token, "anvil-rpc-auth-v1 client" Ns Nc)
//   server -> client  u64 36, i32 kAuthCode, HMAC(token, "anvil-rpc-auth-v1 server" Ns Nc)
//                     or, on refusal, an ordinary kException packet with the reason, then close.
// A client that does not authenticate (Apache TVM's) sends kInitServer instead; the server
// answers it with that kException, so the client fails at once instead of hanging.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "anvil/rpc/hmac_sha256.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {

inline constexpr int32_t kAuthCode = 0x48545541;  // the bytes "AUTH"; no TVM RPCCode is near it
inline constexpr size_t kAuthNonceBytes = 32;
inline constexpr std::string_view kAuthNonceOption = "-auth-nonce=";
// The environment variable both the server and the clients read when no token is given.
inline constexpr const char* kAuthTokenEnv = "ANVIL_RPC_AUTH_TOKEN";

// n bytes from the kernel's random source (getrandom); IOError if it fails.
std::string random_bytes(size_t n);

// The proofs: HMAC-SHA256(token, "anvil-rpc-auth-v1 client|server" || Ns || Nc).
Sha256Digest client_auth_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);
Sha256Digest server_auth_proof(std::string_view token, std::string_view server_nonce, std::string_view client_nonce);

// " -auth-nonce=<hex>": appended to the key the server sends in its handshake reply.
std::string auth_nonce_option(std::string_view server_nonce);
// The nonce carried by a server key ("server:k -auth-nonce=..."), nullopt when there is none.
// ProtocolError when the option is present but malformed.
std::optional<std::string> find_auth_nonce(std::string_view server_key);

// Server side, right after a successful handshake: reads the client's answer (all of it by
// `deadline`, however slowly it arrives), checks it in constant time and sends the server's
// proof. On any failure sends a kException naming the reason (best effort), sets *reason and
// returns false.
bool server_authenticate(Channel& ch, std::string_view token, std::string_view server_nonce,
                         std::chrono::steady_clock::time_point deadline, std::string* reason);

// The server's steps, for a caller that reads without blocking (admission.h). The client's
// first packet is a u64 length then a body; `send` holds what to write back (the proof, or a
// kException packet that explains a refusal; may be empty).
struct AuthVerdict {
  bool ok = false;
  std::string send;
  std::string reason;  // for the log, when !ok
};
// Checks the length alone: nullopt when a body of that length may be an answer.
std::optional<AuthVerdict> check_auth_length(uint64_t length);
// Checks a complete body against the token and the nonce sent in the handshake reply.
AuthVerdict check_auth_answer(std::string_view body, std::string_view token, std::string_view server_nonce);

// Client side, right after the handshake that returned `server_key`. With an empty token and a
// server that asks for none, does nothing. Throws RPCError when the server asks for a token the
// client lacks, when the client has a token and the server offers no authentication (a server
// that cannot prove the token may be an impostor), when the server refuses the token, or when
// the server's proof is wrong; ChannelError/ProtocolError on I/O or malformed replies.
void client_authenticate(Channel& ch, std::string_view token, std::string_view server_key, const std::string& where,
                         const Limits& limits);

// The token a client uses: `explicit_token` when given, else $ANVIL_RPC_AUTH_TOKEN, else "".
std::string resolve_client_token(const std::optional<std::string>& explicit_token);

}  // namespace anvil::rpc
