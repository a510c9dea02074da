// Network addresses as the RPC tools take them: "host:port" strings (--tracker) and hosts given as
// an IPv4 literal, an IPv6 literal or a name, resolved with getaddrinfo for listening and for
// connecting. One place for the port range and the host:port syntax, used by the server, the
// tracker link, the proxy's tracker reporter and the command lines.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

namespace anvil::rpc {

inline constexpr int kMaxPort = 65535;

struct HostPort {
  std::string host;  // without brackets: "127.0.0.1", "::1", "tracker-host"
  int port = 0;
};

// Why `text` is not a port number in [min_port, max_port] ("'abc' is not a port number
// (0..65535)", "70000 is out of range 0..65535"); "" when it is one. Decimal digits only.
std::string port_problem(std::string_view text, int min_port = 0, int max_port = kMaxPort);

// Why `text` is not "host:port", "[v6]:port" (or an unbracketed IPv6 literal, split at its last
// colon) with a port in 1..65535 ("'localhost' has no port (expected host:port, e.g. ...)");
// "" when it is.
std::string host_port_problem(std::string_view text);
// The parts of a valid host:port; ValueError "<what>: <problem>" otherwise.
HostPort parse_host_port(std::string_view text, std::string_view what);

// "host:port", with brackets around an IPv6 literal.
std::string format_host_port(std::string_view host, int port);

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
  int family() const { return storage.ss_family; }
  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
};

// The addresses of `host` (an IPv4 or IPv6 literal, or a name) at `port`, in the order to try.
// "localhost" means 127.0.0.1 (as it always did here, and as clients expect). passive: for
// binding ("0.0.0.0", "::"). ChannelError naming the host when it does not resolve.
std::vector<SocketAddress> resolve_address(const std::string& host, int port, bool passive);

// "1.2.3.4:5" or "[::1]:5"; an IPv4-mapped IPv6 address prints as IPv4.
std::string address_text(const sockaddr* addr, socklen_t length);
// The host part alone ("1.2.3.4", "::1").
std::string address_host(const sockaddr* addr, socklen_t length);

}  // namespace anvil::rpc
