// The accept loop and the per-session process model of the RPC server (see server.h).
#include "anvil/rpc/server.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sstream>
#include <thread>

#include "anvil/base/python_repr.h"
#include "anvil/rpc/admission.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/auth.h"
#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/handshake.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/proxy_link.h"
#include "anvil/rpc/server_functions.h"
#include "anvil/rpc/serving.h"
#include "anvil/rpc/tracker_link.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace fs = std::filesystem;
namespace {

std::atomic<bool> g_stop{false};

fs::path make_session_dir(const std::string& work_root) {
  std::string root = work_root;
  if (root.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    root = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = (fs::path(root) / "anvil-rpc-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    io_error("cannot create a session directory under ", root, ": ", std::strerror(errno));
  }
  return pattern;
}

void load_libraries(const std::vector<std::string>& libraries) {
  for (const std::string& lib : libraries) {
    void* handle = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) io_error("--load-library ", lib, ": ", ::dlerror());
    // A library may register its global functions through this optional entry point.
    using InitFn = void (*)();
    if (auto init = reinterpret_cast<InitFn>(::dlsym(handle, "anvil_rpc_library_init"))) init();
  }
}

// Exit codes of a session child. Anything else (a sanitizer's report, exit() in user code)
// means the session died without telling its client.
constexpr int kChildClean = 0;      // Shutdown or a clean close
constexpr int kChildClosed = 3;     // closed with a logged reason (and a kException when possible)

// The body of a session child: never returns.
[[noreturn]] void run_session_child(Channel conn, const fs::path& dir, const ServerOptions& options) {
  int code = 4;
  try {
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGTERM, SIG_DFL);
    if (::chdir(dir.c_str()) != 0) io_error("chdir ", dir.string(), ": ", std::strerror(errno));
    register_runtime_functions();
    register_server_functions(dir, std::min(options.advertised_packet_bytes, options.limits.max_packet_bytes));
    register_test_functions();
    load_libraries(options.load_libraries);
    std::string peer = conn.peer();
    Endpoint ep(std::move(conn), options.limits);
    ServeResult result = serve_connection(ep);
    if (result.clean) {
      log_info("session with ", peer, " ended: ", result.reason, " (", result.requests, " requests)");
    } else {
      log_warning("session with ", peer, " closed: ", result.reason);
    }
    code = result.clean ? kChildClean : kChildClosed;
  } catch (const std::exception& e) {
    log_error("session setup failed: ", e.what());
  }
  // _exit: the parent's atexit handlers and buffers are not this process's to run.
  ::_exit(code);
}

void send_final_exception(Channel& conn, const std::string& message) {
  try {
    std::string packet = frame_packet(exception_body(message));
    conn.write_all(packet.data(), packet.size(), 1000);
  } catch (const Error&) {
    // The client may be gone already; there is nobody left to tell.
  }
}

// Sleeps up to `total` in short steps, returning early on a stop request.
void sleep_unless_stopped(std::chrono::milliseconds total) {
  auto until = std::chrono::steady_clock::now() + total;
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// How long to wait before dialling a proxy again after `refusals` refusals in a row: 1, 2, 4 ...
// seconds, at most kMaxProxyBackoff.
constexpr std::chrono::seconds kMaxProxyBackoff{60};
std::chrono::seconds proxy_backoff(int refusals) {
  return refusals >= 6 ? kMaxProxyBackoff : std::min(kMaxProxyBackoff, std::chrono::seconds(int64_t{1} << refusals));
}

}  // namespace

bool is_loopback_host(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

// What the parent keeps of a running session: the child, the client's connection (to tell it
// why the session ended) and the directory to remove.
struct Server::RunningSession {
  pid_t pid = -1;
  Channel conn;
  fs::path dir;
  std::string peer;
  std::optional<double> timeout_s;
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

Server::Server(ServerOptions options) : options_(std::move(options)) {
  for (std::string& lib : options_.load_libraries) lib = fs::absolute(lib).string();
  // A deep backlog: the loop accepts continuously, so this only absorbs bursts (many peers at once).
  if (!options_.through_proxy) {
    listener_ = TcpListener::bind(options_.host, options_.port, options_.port_end, /*backlog=*/128);
  }
  set_log_level(options_.silent ? LogLevel::kError : LogLevel::kInfo);
  register_runtime_functions();
}

Server::~Server() = default;

void Server::request_stop() { g_stop.store(true); }

void Server::run() {
  if (options_.through_proxy) {
    run_through_proxy();
  } else {
    run_listening();
  }
  log_info("RPCServer: stopped after ", sessions_, " sessions");
}

void Server::run_listening() {
  log_info("RPCServer: bind to ", format_host_port(options_.host, port()));
  if (options_.auth_token.empty() && !is_loopback_host(options_.host)) {
    // Not through the log level: --silent must not hide this.
    std::string warning = str_cat(
        "WARNING: anvil-rpc server listens on ", options_.host, ":", port(),
        " without --auth-token: anyone who can reach this port can run code on this machine as this user. "
        "Set --auth-token (or $", kAuthTokenEnv, "), or bind to 127.0.0.1.\n");
    ssize_t unused = ::write(STDERR_FILENO, warning.data(), warning.size());
    (void)unused;
  }
  if (options_.no_fork) log_info("--no-fork: sessions still run in forked children (there is no Python to spawn)");
  std::unique_ptr<TrackerLink> tracker;
  if (!options_.tracker.empty()) {
    tracker = std::make_unique<TrackerLink>(options_.tracker, options_.key, port(), options_.custom_addr);
  }
  // One loop for everything: connections in their handshake advance together (admission.h), so
  // a slow peer holds up nobody; one session runs at a time, watched between polls.
  Admission admission(options_.limits, options_.auth_token);
  admission_ = &admission;
  auto may_start = [&] { return options_.max_sessions == 0 || sessions_ < options_.max_sessions; };
  while (session_ || (!g_stop.load() && may_start())) {
    if (!session_ && !g_stop.load() && may_start()) {
      if (tracker) tracker->tick();
      admission.answer_waiting(tracker ? tracker->match_key() : options_.key, options_.key);
      if (std::optional<Admission::Ready> ready = admission.take_ready()) {
        if (!start_session(std::move(ready->conn), ready->client_key, ready->peer) && tracker) {
          tracker->after_session();
        }
      }
    }
    if (admission.step(session_ ? 5 : 250, listener_.fd())) {
      for (int i = 0; i < 64; ++i) {  // everything queued, in one go
        std::optional<Channel> conn;
        try {
          conn = listener_.accept(0);
        } catch (const ChannelError& e) {
          log_warning("accept: ", e.what());  // e.g. out of descriptors: do not spin
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          break;
        }
        if (!conn) break;
        admission.add(std::move(*conn));
      }
    }
    if (session_ && poll_session() && tracker) tracker->after_session();
  }
  admission_ = nullptr;
}

void Server::run_through_proxy() {
  std::string where = format_host_port(options_.host, options_.port);
  log_info("RPCServer: serving through proxy ", where, " as key '", options_.key, "'");
  int refusals = 0;  // DUPLICATE or immediate MISMATCH answers in a row
  while (!g_stop.load() && (options_.max_sessions == 0 || sessions_ < options_.max_sessions)) {
    std::string nonce = options_.auth_token.empty() ? "" : random_bytes(kAuthNonceBytes);
    std::string key = "server:" + options_.key + (nonce.empty() ? "" : auth_nonce_option(nonce));
    auto dialed = std::chrono::steady_clock::now();
    log_info("connecting to proxy ", where, "; waiting for a client");
    ProxyDial d = dial_proxy(options_.host, options_.port, key, options_.limits, g_stop);
    switch (d.status) {
      case ProxyDial::kPaired: {
        refusals = 0;
        std::string peer = str_cat("proxy ", where);
        serve_client(std::move(d.channel), d.client_key, peer, nonce);
        break;
      }
      case ProxyDial::kDuplicate: {
        // Another server waits under our key: a second device with the same key, or a peer
        // holding the key on purpose. Never fatal (that would let anyone who reaches the proxy
        // take this device offline for good): back off and dial again.
        auto delay = proxy_backoff(refusals++);
        log_warning(d.reason, "; still serving: dialling again in ", delay.count(), " s");
        sleep_unless_stopped(delay);
        break;
      }
      case ProxyDial::kMismatch:
        // A proxy that refuses at once must not make us spin; one whose wait expired is normal.
        if (std::chrono::steady_clock::now() - dialed < std::chrono::seconds(1)) {
          auto delay = proxy_backoff(refusals++);
          log_info(d.reason, "; connecting again in ", delay.count(), " s");
          sleep_unless_stopped(delay);
        } else {
          refusals = 0;
          log_info(d.reason, "; connecting again");
        }
        break;
      case ProxyDial::kStopped:
        return;
      case ProxyDial::kFailed:
        log_warning(d.reason, "; retrying in 5 s");
        sleep_unless_stopped(std::chrono::seconds(5));
        break;
    }
  }
}

void Server::serve_client(Channel conn, const std::string& client_key, const std::string& peer,
                          const std::string& server_nonce) {
  if (!options_.auth_token.empty()) {
    std::string reason;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.limits.handshake_timeout_ms);
    if (!server_authenticate(conn, options_.auth_token, server_nonce, deadline, &reason)) {
      log_warning("connection from ", peer, " refused: ", reason);
      return;
    }
  }
  if (!start_session(std::move(conn), client_key, peer)) return;
  while (!poll_session()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

bool Server::start_session(Channel conn, const std::string& client_key, const std::string& peer) {
  std::vector<std::string> warnings;
  ClientHello hello = parse_client_key(client_key, &warnings);
  for (const std::string& w : warnings) log_warning(peer, ": ", w);
  ++sessions_;
  log_info("connection from ", peer, " (key '", hello.key, "')", options_.auth_token.empty() ? "" : ", authenticated");

  fs::path dir;
  try {
    dir = make_session_dir(options_.work_root);
  } catch (const Error& e) {
    log_error(e.what());
    send_final_exception(conn, str_cat("RuntimeError: ", e.what()));
    return false;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    log_error("fork failed: ", std::strerror(errno));
    send_final_exception(conn, "RuntimeError: the server could not start a session process");
    conn.close();
    std::error_code ec;
    fs::remove_all(dir, ec);
    return false;
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so that a timeout also ends what user code spawned
    listener_.close();
    if (admission_ != nullptr) admission_->close_all();  // the parent decides when those close
    run_session_child(std::move(conn), dir, options_);
  }
  ::setpgid(pid, pid);
  session_ = std::make_unique<RunningSession>();
  session_->pid = pid;
  session_->conn = std::move(conn);
  session_->dir = dir;
  session_->peer = peer;
  session_->timeout_s = hello.session_timeout;
  if (hello.session_timeout) {
    // parse_client_key keeps it within kMaxSessionTimeoutS, far inside the clock's range.
    double seconds = std::min(*hello.session_timeout, kMaxSessionTimeoutS);
    session_->deadline = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(seconds));
  }
  return true;
}

bool Server::poll_session() {
  RunningSession& s = *session_;
  int status = 0;
  bool timed_out = false;
  pid_t r = ::waitpid(s.pid, &status, WNOHANG);
  if (r == 0 || (r < 0 && errno == EINTR)) {
    bool expired = s.deadline && std::chrono::steady_clock::now() >= *s.deadline;
    if (!expired && !g_stop.load()) return false;
    timed_out = expired;
    ::kill(-s.pid, SIGKILL);
    while (::waitpid(s.pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  const std::string& peer = s.peer;
  if (timed_out) {
    std::string t = python_float_repr(*s.timeout_s);
    log_warning("session with ", peer, " timed out after ", t, " s");
    send_final_exception(s.conn, str_cat(kSessionTimeoutPrefix, "Your ", t,
                                         "s session has expired, try to increase the \"session_timeout\" value."));
  } else if (WIFSIGNALED(status) && !g_stop.load()) {
    int sig = WTERMSIG(status);
    log_error("session with ", peer, " died of signal ", sig, " (", ::strsignal(sig), "); still serving");
    send_final_exception(s.conn, str_cat("RuntimeError: the RPC session process died of signal ", sig, " (",
                                         ::strsignal(sig), ")"));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != kChildClean && WEXITSTATUS(status) != kChildClosed) {
    int code = WEXITSTATUS(status);
    log_error("session with ", peer, " exited with status ", code, "; still serving");
    send_final_exception(s.conn, str_cat("RuntimeError: the RPC session process exited with status ", code));
  }
  // Whatever user code spawned in the session's process group goes with it.
  ::kill(-s.pid, SIGKILL);
  s.conn.close();
  std::error_code ec;
  fs::remove_all(s.dir, ec);
  if (ec) log_warning("cannot remove session directory ", s.dir.string(), ": ", ec.message());
  session_.reset();
  return true;
}

int serve_pipe_session(int read_fd, int write_fd, const ServerOptions& options) {
  set_log_level(options.silent ? LogLevel::kError : LogLevel::kInfo);
  // Inherited without close-on-exec (they had to survive our exec); nothing the session starts
  // may hold the client's pipes open.
  for (int fd : {read_fd, write_fd}) ::fcntl(fd, F_SETFD, ::fcntl(fd, F_GETFD) | FD_CLOEXEC);
  fs::path dir = make_session_dir(options.work_root);
  pid_t pid = ::fork();
  if (pid < 0) io_error("fork failed: ", std::strerror(errno));
  if (pid == 0) run_session_child(Channel(read_fd, write_fd, "pipe"), dir, options);
  // The parent only waits, to remove the directory whatever becomes of the session.
  ::close(read_fd);
  if (write_fd != read_fd) ::close(write_fd);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (WIFSIGNALED(status)) {  // the shell's convention: 128 + the signal
    log_warning("the session process ", pid, " was killed by signal ", WTERMSIG(status), " (",
                ::strsignal(WTERMSIG(status)), ")");
    return 128 + WTERMSIG(status);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace anvil::rpc
