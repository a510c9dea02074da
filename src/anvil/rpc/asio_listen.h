// Opening a listening socket on standalone Asio the way TVM's tools do: resolve the host (an
// IPv4 or IPv6 literal or a name; "localhost" is 127.0.0.1, as for the server), then bind the
// first free port of [port, port_end). Shared by the
// event-driven tools (tracker, proxy); header-only so that the RPC core library itself stays
// free of Asio. Failures throw anvil::Error (IOError) naming the tool, the address and the cause.
#pragma once

#include <asio.hpp>
#include <string>

#include "anvil/base/error.h"

namespace anvil::rpc {

// `what` names the tool in error messages ("tracker", "proxy").
inline asio::ip::address resolve_host(asio::io_context& io, const std::string& host, const char* what) {
  asio::error_code ec;
  auto address = asio::ip::make_address(host == "localhost" ? "127.0.0.1" : host, ec);
  if (!ec) return address;
  asio::ip::tcp::resolver resolver(io);
  auto results = resolver.resolve(host, "0", ec);
  if (ec || results.empty()) {
    io_error(what, ": cannot resolve host '", host, "': ", ec ? ec.message() : "no address",
             " (expected an IPv4 or IPv6 address or a host name)");
  }
  return results.begin()->endpoint().address();
}

// Binds `acceptor` to the first free port of [port, port_end) (just `port` when port_end <=
// port; port 0 lets the system choose) and listens; returns the bound port. TVM listens with a
// backlog of 1; a farm's worth of peers connecting at once needs the system maximum.
inline int listen_on_first_free_port(asio::ip::tcp::acceptor& acceptor, const asio::ip::address& address,
                                     const std::string& host, int port, int port_end, const char* what) {
  int last = port_end > port ? port_end : port + 1;
  if (port < 0 || port > 65535 || last > 65536) {
    value_error(what, ": port range [", port, ", ", last, ") is invalid (ports are 0..65535)");
  }
  asio::error_code in_use;
  for (int p = port; p < last; ++p) {
    asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(p));
    asio::error_code ec;
    if (acceptor.is_open()) acceptor.close(ec);
    acceptor.open(endpoint.protocol(), ec);
    if (ec) io_error(what, ": cannot open a socket for ", host, ": ", ec.message());
    acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    acceptor.bind(endpoint, ec);
    if (ec == asio::error::address_in_use) {
      in_use = ec;
      continue;
    }
    if (ec) io_error(what, ": cannot bind ", host, ":", p, ": ", ec.message());
    acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) io_error(what, ": cannot listen on ", host, ":", p, ": ", ec.message());
    return acceptor.local_endpoint().port();
  }
  if (last == port + 1) io_error(what, ": cannot bind ", host, ":", port, ": ", in_use.message());
  io_error(what, ": cannot bind ", host, " on any port in [", port, ", ", last, "): ", in_use.message());
}

}  // namespace anvil::rpc
