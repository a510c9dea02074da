// `anvil-rpc server`: the flags and defaults of TVM's `python -m tvm.exec.rpc_server` (spec §6.1)
// plus a few limits of our own, parsed with CLI11; runs a Server until SIGINT/SIGTERM.
#include <CLI/CLI.hpp>

#include <signal.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "anvil/rpc/auth.h"
#include "anvil/rpc/cli.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/server.h"

namespace anvil::rpc {
namespace {

void on_stop_signal(int) { Server::request_stop(); }

std::vector<std::string> split_libraries(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ':')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

// Overwrites the token in our own argument list, so that `ps` and /proc/<pid>/cmdline stop
// showing it (it was visible from exec until here; the environment variable avoids even that).
void hide_token_in_argv(int argc, char** argv) {
  constexpr std::string_view kFlag = "--auth-token";
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == kFlag && i + 1 < argc) {
      std::memset(argv[i + 1], 'x', std::strlen(argv[i + 1]));
    } else if (arg.starts_with(kFlag) && arg.size() > kFlag.size() && arg[kFlag.size()] == '=') {
      std::memset(argv[i] + kFlag.size() + 1, 'x', arg.size() - kFlag.size() - 1);
    }
  }
}

}  // namespace

int server_main(int argc, char** argv) {
  ServerOptions o;
  std::string load_library;
  double idle_timeout_s = o.limits.idle_timeout_ms / 1000.0;
  double handshake_timeout_s = o.limits.handshake_timeout_ms / 1000.0;
  double stall_timeout_s = o.limits.stall_timeout_ms / 1000.0;
  CLI::App app{
      "Anvil RPC server: serves Apache TVM RPC clients (tvm.rpc.connect) and Anvil clients, one session at a "
      "time, each in its own process and temporary directory."};
  app.name("anvil-rpc server");
  cli::setup(app);
  app.add_option("--host", o.host,
                 "Address to bind: an IPv4 or IPv6 literal or a host name (localhost: 127.0.0.1); with "
                 "--through-proxy, the proxy's")
      ->capture_default_str();
  cli::add_port_option(app, "--port", o.port, "First port to try")->capture_default_str();
  cli::add_port_option(app, "--port-end", o.port_end, "Exclusive end of the port search range", 0, 65536)
      ->capture_default_str();
  app.add_option("--tracker", o.tracker, "Tracker address host:port to register with (needs --key)")
      ->check(cli::host_port());
  app.add_option("--key", o.key, "Device key that clients (and the tracker) match")->capture_default_str();
  app.add_option("--custom-addr", o.custom_addr, "Address reported to the tracker instead of the peer IP");
  app.add_option("--load-library", load_library,
                 "Colon-separated shared libraries loaded (RTLD_GLOBAL) in every session; a library may export "
                 "`void anvil_rpc_library_init()` to register its functions");
  app.add_flag("--through-proxy", o.through_proxy,
               "Serve through an RPC proxy: dial the proxy at --host:--port instead of listening (TVM's flag)");
  app.add_option("--auth-token", o.auth_token,
                 "Require this secret from every client (HMAC-SHA256 challenge-response, Anvil clients only; "
                 "default: $ANVIL_RPC_AUTH_TOKEN, which keeps it out of `ps`)");
  app.add_flag("--silent", o.silent, "Log errors only");
  app.add_flag("--no-fork", o.no_fork, "Accepted for TVM compatibility (sessions always run in a forked child)");
  app.add_option("--work-root", o.work_root, "Directory for the per-session temporary directories (default $TMPDIR)");
  app.add_option("--max-packet-bytes", o.limits.max_packet_bytes, "Largest packet accepted from a client")
      ->capture_default_str();
  app.add_option("--idle-timeout", idle_timeout_s,
                 "Seconds a session may wait for the client's next request before the server ends it (default "
                 "3600 s = 1 hour)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--handshake-timeout", handshake_timeout_s,
                 "Seconds a new connection has, from accept, to complete the handshake and the --auth-token "
                 "exchange, in all (however slowly its bytes arrive)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--stall-timeout", stall_timeout_s,
                 "Seconds a session waits for the next byte in the middle of a packet before it ends the session "
                 "(a truncated packet; default 60)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  std::string pipe_fds;
  app.add_option("--pipe-fds", pipe_fds, "Serve one session over inherited descriptors READ,WRITE (no handshake), then exit")
      ->group("");  // internal: used by RPCSession::spawn
  app.add_option("--max-sessions", o.max_sessions, "Exit after serving this many sessions (0: never)")
      ->capture_default_str();
  if (std::optional<int> status = cli::parse(app, argc, argv)) return *status;
  hide_token_in_argv(argc, argv);
  if (o.auth_token.empty()) {
    const char* env = std::getenv(kAuthTokenEnv);
    if (env != nullptr) o.auth_token = env;
  }
  if (o.through_proxy && !o.tracker.empty()) {
    return cli::usage_error(app, "--tracker cannot be combined with --through-proxy: start the proxy with --tracker "
                                 "instead, it registers the servers that dial it");
  }
  if (!o.tracker.empty() && o.key.empty()) {
    return cli::usage_error(app, "--tracker needs --key (the type of device clients ask the tracker for)");
  }
  o.load_libraries = split_libraries(load_library);
  for (auto [flag, seconds] : {std::pair{"--idle-timeout", idle_timeout_s},
                               std::pair{"--handshake-timeout", handshake_timeout_s},
                               std::pair{"--stall-timeout", stall_timeout_s}}) {
    if (std::isnan(seconds)) {  // CLI::PositiveNumber lets NaN through
      log_error(flag, " expects a number of seconds > 0, not nan");
      return 2;
    }
  }
  // Larger values (up to inf) mean "practically never": about 23 days, the most poll() takes.
  o.limits.idle_timeout_ms = static_cast<int>(std::min(idle_timeout_s * 1000.0, 2.0e9));
  o.limits.handshake_timeout_ms = static_cast<int>(std::min(handshake_timeout_s * 1000.0, 2.0e9));
  o.limits.stall_timeout_ms = static_cast<int>(std::min(stall_timeout_s * 1000.0, 2.0e9));

  ::signal(SIGPIPE, SIG_IGN);
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  try {
    if (!pipe_fds.empty()) {
      int read_fd = -1, write_fd = -1;
      if (std::sscanf(pipe_fds.c_str(), "%d,%d", &read_fd, &write_fd) != 2 || read_fd < 0 || write_fd < 0) {
        return cli::usage_error(app, str_cat("--pipe-fds expects READ,WRITE descriptors, got '", pipe_fds, "'"));
      }
      return serve_pipe_session(read_fd, write_fd, o);
    }
    Server server(o);
    server.run();
  } catch (const std::exception& e) {
    log_error(e.what());
    return 1;
  }
  return 0;
}

}  // namespace anvil::rpc
