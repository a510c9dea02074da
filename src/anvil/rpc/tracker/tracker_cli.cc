// `anvil-rpc tracker` and `anvil-rpc query`: TVM's rpc_tracker / query_rpc_tracker command
// lines (same flags and defaults), plus --http-port for the status page.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/cli.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/tracker/summary_text.h"
#include "anvil/rpc/tracker/tracker.h"
#include "anvil/rpc/tracker/tracker_client.h"

namespace anvil::rpc {

int tracker_main(int argc, char** argv) {
  tracker::TrackerOptions options;
  bool silent = false;
  int http_port = -1;
  CLI::App app{"Run the RPC tracker: servers register under a device key, clients request one "
               "(Apache TVM's tracker protocol; TVM clients, servers and query_rpc_tracker work with it).",
               "anvil-rpc tracker"};
  cli::setup(app);
  app.add_option("--host", options.host,
                 "The address the tracker binds to: an IPv4 or IPv6 literal or a host name")
      ->capture_default_str();
  cli::add_port_option(app, "--port", options.port, "The port of the RPC")->capture_default_str();
  cli::add_port_option(app, "--port-end", options.port_end, "The end search port of the RPC", 0, 65536)
      ->capture_default_str();
  app.add_flag("--silent", silent, "Whether run in silent mode.");
  cli::add_port_option(app, "--http-port", http_port,
                       "Serve a status page (HTML, /summary.json, Prometheus /metrics) on this port; 0 = any free port");
  app.add_option("--stop-key", options.stop_key,
                 "Accept STOP requests carrying this key (default: a random key nobody knows)");
  if (std::optional<int> status = cli::parse(app, argc, argv)) return *status;
  if (silent) set_log_level(LogLevel::kWarning);
  if (http_port >= 0) options.http_port = http_port;
  options.handle_signals = true;
  try {
    tracker::Tracker server(options);
    server.run();
  } catch (const anvil::Error& err) {
    log_error(err.what());  // "tracker: cannot bind ...": the message names the tool once
    return 1;
  }
  return 0;
}

int query_main(int argc, char** argv) {
  std::string host;
  int port = 0;
  CLI::App app{"Print the servers and queues of an RPC tracker (as TVM's query_rpc_tracker).",
               "anvil-rpc query"};
  cli::setup(app);
  app.add_option("--host", host, "the hostname of the tracker (default: $TVM_TRACKER_HOST or 127.0.0.1)");
  cli::add_port_option(app, "--port", port, "The port of the RPC (default: $TVM_TRACKER_PORT or 9190)", 1);
  if (std::optional<int> status = cli::parse(app, argc, argv)) return *status;
  if (host.empty()) {
    const char* env = std::getenv("TVM_TRACKER_HOST");
    host = env && *env ? env : "127.0.0.1";
  }
  if (port == 0) {
    const char* env = std::getenv("TVM_TRACKER_PORT");
    std::string text = env && *env ? env : "9190";
    std::string problem = port_problem(text, 1);
    if (!problem.empty()) return cli::usage_error(app, str_cat("$TVM_TRACKER_PORT: ", problem));
    port = std::stoi(text);
  }
  try {
    tracker::TrackerClient client(host, port);
    std::cout << tracker::query_output(host, port, client.summary()) << std::flush;
  } catch (const anvil::Error& err) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), err.what());
    return 1;
  }
  return 0;
}

}  // namespace anvil::rpc
