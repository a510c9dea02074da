// Host:port parsing and getaddrinfo-based resolution (see address.h).
#include "anvil/rpc/address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/rpc/protocol.h"

namespace anvil::rpc {

std::string port_problem(std::string_view text, int min_port, int max_port) {
  std::string range = str_cat(min_port, "..", max_port);
  if (text.empty()) return str_cat("an empty port is not a port number (", range, ")");
  size_t start = text[0] == '-' ? 1 : 0;
  bool digits = text.size() > start && text.size() - start <= 9;
  for (size_t i = start; i < text.size(); ++i) digits = digits && text[i] >= '0' && text[i] <= '9';
  if (!digits) return str_cat("'", text, "' is not a port number (", range, ")");
  long value = std::stol(std::string(text));
  if (value < min_port || value > max_port) return str_cat(text, " is out of range ", range);
  return "";
}

namespace {

// Splits host:port; false when there is no port separator.
bool split_host_port(std::string_view text, std::string_view* host, std::string_view* port, std::string* why) {
  if (text.starts_with('[')) {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *why = "has no closing ']'";
      return false;
    }
    if (close + 1 >= text.size() || text[close + 1] != ':') {
      *why = "has no port";
      return false;
    }
    *host = text.substr(1, close - 1);
    *port = text.substr(close + 2);
    return true;
  }
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) {
    *why = "has no port";
    return false;
  }
  *host = text.substr(0, colon);
  *port = text.substr(colon + 1);
  return true;
}

}  // namespace

std::string host_port_problem(std::string_view text) {
  std::string_view host, port;
  std::string why;
  if (split_host_port(text, &host, &port, &why)) {
    if (host.empty()) {
      why = "has no host";
    } else {
      std::string p = port_problem(port, 1);
      if (!p.empty()) why = str_cat("has a bad port: ", p);
    }
  }
  if (why.empty()) return "";
  return str_cat("'", text, "' ", why, " (expected host:port, e.g. 127.0.0.1:9190 or [::1]:9190)");
}

HostPort parse_host_port(std::string_view text, std::string_view what) {
  std::string problem = host_port_problem(text);
  if (!problem.empty()) value_error(what, ": ", problem);
  std::string_view host, port;
  std::string why;
  split_host_port(text, &host, &port, &why);
  return HostPort{std::string(host), std::stoi(std::string(port))};
}

std::string format_host_port(std::string_view host, int port) {
  bool v6 = host.find(':') != std::string_view::npos;
  return v6 ? str_cat("[", host, "]:", port) : str_cat(host, ":", port);
}

std::vector<SocketAddress> resolve_address(const std::string& host, int port, bool passive) {
  std::string name = host == "localhost" ? "127.0.0.1" : host;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* list = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(name.empty() ? nullptr : name.c_str(), service.c_str(), &hints, &list);
  if (rc != 0) {
    throw ChannelError(str_cat("cannot resolve host '", host, "': ", ::gai_strerror(rc),
                               " (expected an IPv4 or IPv6 address or a host name)"));
  }
  std::vector<SocketAddress> out;
  for (addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) || ai->ai_addrlen > sizeof(sockaddr_storage)) continue;
    SocketAddress a;
    std::memcpy(&a.storage, ai->ai_addr, ai->ai_addrlen);
    a.length = static_cast<socklen_t>(ai->ai_addrlen);
    out.push_back(a);
  }
  ::freeaddrinfo(list);
  if (out.empty()) throw ChannelError(str_cat("host '", host, "' has no IPv4 or IPv6 address"));
  return out;
}

std::string address_host(const sockaddr* addr, socklen_t length) {
  char buf[INET6_ADDRSTRLEN] = {0};
  if (addr->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(addr)->sin_addr, buf, sizeof buf);
  } else if (addr->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    const in6_addr& a6 = reinterpret_cast<const sockaddr_in6*>(addr)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
      ::inet_ntop(AF_INET, &a6.s6_addr[12], buf, sizeof buf);
    } else {
      ::inet_ntop(AF_INET6, &a6, buf, sizeof buf);
    }
  }
  return buf;
}

std::string address_text(const sockaddr* addr, socklen_t length) {
  int port = 0;
  if (addr->sa_family == AF_INET && length >= sizeof(sockaddr_in)) {
    port = ntohs(reinterpret_cast<const sockaddr_in*>(addr)->sin_port);
  } else if (addr->sa_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(addr)->sin6_port);
  }
  return format_host_port(address_host(addr, length), port);
}

}  // namespace anvil::rpc
