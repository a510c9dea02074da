// `anvil-rpc tracker` and `anvil-rpc query`: TVM's rpc_tracker / query_rpc_tracker command
// lines (same flags and defaults), plus --http-port for the status page.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "anvil/base/error.h"
#include "anvil/rpc/cli.h"
#include "anvil/rpc/tracker/log.h"
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
  app.add_option("--host", options.host, "The host IP address the tracker binds to")->capture_default_str();
  app.add_option("--port", options.port, "The port of the RPC")->capture_default_str();
  app.add_option("--port-end", options.port_end, "The end search port of the RPC")->capture_default_str();
  app.add_flag("--silent", silent, "Whether run in silent mode.");
  app.add_option("--http-port", http_port,
                 "Serve a status page (HTML, /summary.json, Prometheus /metrics) on this port; 0 = any free port")
      ->check(CLI::Range(0, 65535));
  app.add_option("--stop-key", options.stop_key,
                 "Accept STOP requests carrying this key (default: a random key nobody knows)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    return app.exit(err);
  }
  if (silent) tracker::set_log_level(tracker::LogLevel::kWarning);
  if (http_port >= 0) options.http_port = http_port;
  options.handle_signals = true;
  try {
    tracker::Tracker server(options);
    server.run();
  } catch (const anvil::Error& err) {
    std::fprintf(stderr, "anvil-rpc tracker: %s\n", err.what());
    return 1;
  }
  return 0;
}

int query_main(int argc, char** argv) {
  std::string host;
  int port = 0;
  CLI::App app{"Print the servers and queues of an RPC tracker (as TVM's query_rpc_tracker).",
               "anvil-rpc query"};
  app.add_option("--host", host, "the hostname of the tracker (default: $TVM_TRACKER_HOST or 127.0.0.1)");
  app.add_option("--port", port, "The port of the RPC (default: $TVM_TRACKER_PORT or 9190)")
      ->check(CLI::Range(0, 65535));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& err) {
    return app.exit(err);
  }
  if (host.empty()) {
    const char* env = std::getenv("TVM_TRACKER_HOST");
    host = env && *env ? env : "127.0.0.1";
  }
  if (port == 0) {
    const char* env = std::getenv("TVM_TRACKER_PORT");
    port = env && *env ? std::atoi(env) : 9190;
  }
  try {
    tracker::TrackerClient client(host, port);
    std::cout << tracker::query_output(host, port, client.summary()) << std::flush;
  } catch (const anvil::Error& err) {
    std::fprintf(stderr, "anvil-rpc query: %s\n", err.what());
    return 1;
  }
  return 0;
}

}  // namespace anvil::rpc
