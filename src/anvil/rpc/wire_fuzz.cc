// libFuzzer target for everything the RPC server reads from a client. The first input byte picks
// the entry point, the rest is what a hostile peer would send:
//   0: a handshake byte stream (accept_handshake over a socketpair),
//   1: a packet stream after the handshake (framing, request decoding, then execution of
//      syscalls and copies on a fresh LocalSession),
//   2: one packet body (decode_request and execution as above).
// Every input must end in a clean result or an anvil::Error; crashes, hangs, leaks and
// sanitizer reports are bugs. CallFunc is decoded but not executed: the registry holds functions
// (load_module, ...) whose effects on this machine are not what is being fuzzed here.
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/handshake.h"
#include "anvil/rpc/local_session.h"
#include "anvil/rpc/request.h"
#include "anvil/runtime/register.h"

namespace {

using namespace anvil::rpc;

Limits fuzz_limits() {
  Limits l;
  l.max_packet_bytes = 1 << 16;
  l.max_alloc_bytes = 1 << 20;  // sanitizer allocators abort on absurd sizes
  l.handshake_timeout_ms = 100;
  l.stall_timeout_ms = 100;
  l.idle_timeout_ms = 100;
  return l;
}

void execute(LocalSession& session, const Request& q) {
  std::string staging;
  auto code = static_cast<RPCCode>(q.code);
  try {
    if (code == RPCCode::kCopyToRemote) {
      session.copy_to_remote(q.tensor, q.data);
    } else if (code == RPCCode::kCopyFromRemote) {
      session.copy_from_remote(q.tensor, q.nbytes, &staging);
    } else if (q.code >= kSyscallCodeStart && q.code <= kSyscallCodeEnd) {
      session.syscall(code, q.args);
    }
  } catch (const anvil::Error&) {
  }
}

void decode_and_execute(LocalSession& session, std::string_view body, const Limits& limits) {
  try {
    execute(session, decode_request(body, limits));
  } catch (const anvil::Error&) {
  }
}

// The bytes as a peer's stream: written whole, then the peer half-closes.
Channel stream_of(std::string_view bytes, Channel* peer_out) {
  auto [ours, peer] = channel_pair();
  peer.write_all(bytes.data(), bytes.size(), 100);
  ::shutdown(peer.write_fd(), SHUT_WR);
  *peer_out = std::move(peer);
  return std::move(ours);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  anvil::register_runtime_functions();
  if (size == 0 || size > 60000) return 0;  // the stream modes must fit a socket buffer
  Limits limits = fuzz_limits();
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  Channel peer;
  switch (data[0] % 3) {
    case 0: {
      Channel ch = stream_of(rest, &peer);
      std::string reason;
      accept_handshake(ch, "x1", "x1", limits,
                       std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.handshake_timeout_ms),
                       &reason);
      break;
    }
    case 1: {
      Endpoint ep(stream_of(rest, &peer), limits);
      LocalSession session(limits);
      try {
        while (std::optional<std::string> body = ep.recv_packet()) decode_and_execute(session, *body, limits);
      } catch (const anvil::Error&) {
      }
      break;
    }
    default: {
      LocalSession session(limits);
      decode_and_execute(session, rest, limits);
      break;
    }
  }
  return 0;
}
