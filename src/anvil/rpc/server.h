// The RPC server: listens on a TCP port, performs the handshakes of all connecting peers at once
// (each within one deadline from accept, so a slow peer holds up no one: admission.h), and
// serves one session at a time, each in a forked child process with its own temporary work
// directory (removed afterwards); clients admitted meanwhile wait for it. A crash or a hang in
// user code ends that session only: the parent reports it to the client when it can and goes
// on serving. A session timeout requested by the client
// ("-timeout=" in its key) kills the child and tells the client RPCSessionTimeoutError.
// Optionally registers with a tracker and re-registers after each session (tracker_link.h).
// With through_proxy it listens nowhere: it dials an RPC proxy at host:port and serves the
// clients the proxy pairs it with, one after another (proxy_link.h). With an auth token every
// client must pass the challenge-response of auth.h before its session starts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {

class Admission;

struct ServerOptions {
  std::string host = "0.0.0.0";
  int port = 9090;
  int port_end = 9199;                      // exclusive end of the port search
  std::string key;                          // device key ("" matches "client:")
  std::string tracker;                      // "host:port" or ""
  std::string custom_addr;                  // address reported to the tracker instead of the peer IP
  std::vector<std::string> load_libraries;  // dlopen'ed (RTLD_GLOBAL) in every session
  bool silent = false;
  bool no_fork = false;                     // accepted for TVM compatibility; sessions always fork
  Limits limits;
  std::string work_root;                    // parent of session directories; "" = $TMPDIR or /tmp
  int max_sessions = 0;                     // stop after this many sessions (0 = never); for tests
  uint64_t advertised_packet_bytes = uint64_t{64} << 20;  // GetCRTMaxPacketSize (clamped to the limit)
  bool through_proxy = false;               // host:port is a proxy to dial (TVM's --through-proxy)
  std::string auth_token;                   // "" = no authentication (TVM's behaviour)
};

// True for addresses only this machine can reach: 127.x.y.z, "localhost", "::1".
bool is_loopback_host(const std::string& host);

class Server {
 public:
  // Binds the first free port in [port, port_end) (through_proxy: binds nothing). ChannelError
  // when none is free.
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  int port() const { return listener_.port(); }
  // Serves until request_stop() (e.g. from SIGINT/SIGTERM) or max_sessions sessions. Through a
  // proxy, DUPLICATE and MISMATCH are never fatal (TVM's server exits on DUPLICATE): it backs
  // off (1, 2, 4 ... 60 s, logged) and dials again.
  void run();
  // Async-signal-safe: makes run() return after the current session.
  static void request_stop();

 private:
  struct RunningSession;
  void run_listening();
  void run_through_proxy();
  // Through a proxy, after its handshake: the auth challenge (when a token is set), then the
  // session, waited for.
  void serve_client(Channel conn, const std::string& client_key, const std::string& peer,
                    const std::string& server_nonce);
  // Forks the session child for an admitted client (false when that failed; the client is told).
  bool start_session(Channel conn, const std::string& client_key, const std::string& peer);
  // Checks the running session without blocking: ends it on its timeout or a stop request,
  // reports how it ended, cleans up. True when it is over.
  bool poll_session();

  ServerOptions options_;
  TcpListener listener_;
  int sessions_ = 0;
  std::unique_ptr<RunningSession> session_;  // at most one at a time
  Admission* admission_ = nullptr;           // run_listening's pending connections
};

// Serves one session over two inherited descriptors (a client's pipes, see connect_popen): no
// handshake; as for TCP sessions the session runs in a forked child with a temporary work
// directory (removed after it), so a crashing kernel ends only the session. Returns the
// session's exit status, 128 + the signal when it was killed.
int serve_pipe_session(int read_fd, int write_fd, const ServerOptions& options);

}  // namespace anvil::rpc
