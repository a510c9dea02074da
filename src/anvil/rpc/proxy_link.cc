// Dialling an RPC proxy as a server (see proxy_link.h).
#include "anvil/rpc/proxy_link.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include "anvil/rpc/address.h"

namespace anvil::rpc {
namespace {

// Keepalive probes after 60 s of silence, every 10 s, 6 unanswered = dead: a proxy that
// vanished without closing is noticed within two minutes instead of hours.
void enable_keepalive(int fd) {
  int on = 1, idle = 60, interval = 10, count = 6;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

ProxyDial dial_proxy(const std::string& host, int port, const std::string& server_key, const Limits& limits,
                     const std::atomic<bool>& stop) {
  ProxyDial d;
  std::string where = format_host_port(host, port);
  try {
    Channel ch = tcp_connect(host, port, limits.handshake_timeout_ms);
    enable_keepalive(ch.read_fd());
    int32_t magic = kRPCMagic;
    auto len = static_cast<int32_t>(server_key.size());
    ch.write_all(&magic, 4, limits.handshake_timeout_ms);
    ch.write_all(&len, 4, limits.handshake_timeout_ms);
    ch.write_all(server_key.data(), server_key.size(), limits.handshake_timeout_ms);
    // Pairing may take as long as it takes for a client to come.
    for (;;) {
      if (stop.load()) {
        d.status = ProxyDial::kStopped;
        return d;
      }
      pollfd pfd{ch.read_fd(), POLLIN, 0};
      int r = ::poll(&pfd, 1, 250);
      if (r > 0) break;
      if (r < 0 && errno != EINTR) throw ChannelError(str_cat("poll: ", std::strerror(errno)));
    }
    // Bytes are here: the whole reply (code, key length, key) has one deadline (issue #10 item 1).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(limits.handshake_timeout_ms);
    int32_t code = 0;
    if (!ch.read_exact_until(&code, 4, deadline, /*allow_eof=*/true)) {
      d.reason = str_cat("proxy ", where, " closed the connection before pairing");
      return d;
    }
    if (code == kRPCCodeDuplicate) {
      d.status = ProxyDial::kDuplicate;
      d.reason = str_cat("key '", server_key, "' has already been used in proxy ", where,
                         " (another server waits under it)");
      return d;
    }
    if (code == kRPCCodeMismatch) {
      d.status = ProxyDial::kMismatch;
      d.reason = str_cat("proxy ", where, " has no matching client for '", server_key, "'");
      return d;
    }
    if (code != kRPCCodeSuccess) {
      d.reason = str_cat(where, " is not an RPC proxy (answered 0x", std::hex, code, ")");
      return d;
    }
    int32_t keylen = 0;
    ch.read_exact_until(&keylen, 4, deadline);
    if (keylen < 0 || static_cast<uint32_t>(keylen) > limits.max_key_bytes) {
      d.reason = str_cat("proxy ", where, " sent a client key of ", keylen, " bytes");
      return d;
    }
    d.client_key.assign(static_cast<size_t>(keylen), '\0');
    if (keylen > 0) ch.read_exact_until(d.client_key.data(), d.client_key.size(), deadline);
    d.channel = std::move(ch);
    d.status = ProxyDial::kPaired;
  } catch (const Error& e) {
    d.status = ProxyDial::kFailed;
    d.reason = str_cat("proxy ", where, ": ", e.what());
  }
  return d;
}

}  // namespace anvil::rpc
