// `anvil-rpc proxy`: the flags and defaults of TVM's `python -m tvm.exec.rpc_proxy` (spec §6.3)
// without the websocket ones, plus the timeouts and limits of TVM's Proxy class.
#include <CLI/CLI.hpp>

#include <signal.h>

#include <cstdio>

#include "anvil/base/error.h"
#include "anvil/rpc/cli.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/proxy/proxy.h"

namespace anvil::rpc {

int proxy_main(int argc, char** argv) {
  proxy::ProxyOptions o;
  bool silent = false;
  double timeout_client_s = 600, timeout_server_s = 600, handshake_timeout_s = 10;
  CLI::App app{
      "Run an RPC proxy: servers that cannot be reached (phones, boards behind NAT) and clients both dial it; it "
      "pairs them by key and relays the session (Apache TVM's rpc_proxy protocol; start servers with "
      "`anvil-rpc server --through-proxy --host PROXY --port PORT --key K`).",
      "anvil-rpc proxy"};
  cli::setup(app);
  app.add_option("--host", o.host, "The address the proxy binds to: an IPv4 or IPv6 literal or a host name")
      ->capture_default_str();
  cli::add_port_option(app, "--port", o.port, "The port of the RPC")->capture_default_str();
  cli::add_port_option(app, "--port-end", o.port_end, "The end search port of the RPC", 0, 65536)
      ->capture_default_str();
  app.add_option("--tracker", o.tracker,
                 "Report to RPC tracker host:port: each waiting server is registered under its key, and clients "
                 "request it through the tracker")
      ->check(cli::host_port());
  app.add_option("--custom-addr", o.custom_addr,
                 "Address the tracker gives clients for this proxy (default: the proxy's address as the tracker "
                 "sees it)");
  app.add_option("--timeout-client", timeout_client_s, "Seconds a client may wait for its server (no tracker)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--timeout-server", timeout_server_s, "Seconds a server may wait for a client (no tracker)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--handshake-timeout", handshake_timeout_s, "Seconds a new connection has to send its key")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--max-key-bytes", o.max_key_bytes, "Longest key accepted")->capture_default_str();
  app.add_option("--max-connections", o.max_connections, "Connections open at once (more are refused)")
      ->capture_default_str();
  app.add_flag("--silent", silent, "Log warnings and errors only");
  if (std::optional<int> status = cli::parse(app, argc, argv)) return *status;
  auto ms = [](double s) { return std::chrono::milliseconds(static_cast<int64_t>(std::min(s, 1e9) * 1000.0)); };
  o.timeout_client = ms(timeout_client_s);
  o.timeout_server = ms(timeout_server_s);
  o.handshake_timeout = ms(handshake_timeout_s);
  o.handle_signals = true;
  set_log_level(silent ? LogLevel::kWarning : LogLevel::kInfo);
  ::signal(SIGPIPE, SIG_IGN);
  try {
    proxy::Proxy p(o);
    p.run();
  } catch (const std::exception& e) {
    log_error(e.what());  // "proxy: cannot bind ...": the message names the tool once
    return 1;
  }
  return 0;
}

}  // namespace anvil::rpc
