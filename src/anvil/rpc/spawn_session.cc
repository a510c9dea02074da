// connect_local and connect_popen (see spawn_session.h): the server as a thread of this process
// or as a child process, each tied to the client's channel through a ChannelPeer that cleans up
// when the channel closes and explains an unexpected end of the stream.
#include "anvil/rpc/spawn_session.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <thread>

#include "anvil/rpc/local_session.h"
#include "anvil/rpc/log.h"
#include "anvil/rpc/server_functions.h"
#include "anvil/rpc/serving.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

fs::path make_work_dir(const std::string& work_root) {
  std::string root = work_root;
  if (root.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    root = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  std::string pattern = (fs::path(root) / "anvil-rpc-local-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    io_error("LocalSession: cannot create a work directory under ", root, ": ", std::strerror(errno));
  }
  return pattern;
}

// ---- connect_local ----

// The serving thread of an in-process session and its work directory.
class ServingThread final : public ChannelPeer {
 public:
  explicit ServingThread(fs::path dir) : dir_(std::move(dir)) {}
  ~ServingThread() override { finish(); }

  void start(Channel server_end, Limits limits, std::shared_ptr<const SessionFunctions> functions, bool verbose) {
    thread_ = std::thread([outcome = outcome_, ch = std::move(server_end), limits, functions, verbose]() mutable {
      // The session's INFO lines (every upload, every load) are a server's log, not this
      // program's output: shown only when asked for.
      ScopedThreadLogLevel quiet(verbose ? LogLevel::kInfo : LogLevel::kWarning);
      std::string reason;
      try {
        ScopedSessionFunctions scope(std::move(functions));
        Endpoint ep(std::move(ch), limits);
        reason = serve_connection(ep, "LocalSession").reason;
      } catch (const std::exception& e) {
        reason = e.what();
      }
      std::lock_guard<std::mutex> lock(outcome->mutex);
      outcome->reason = std::move(reason);
    });
  }

  void on_channel_closed() override { finish(); }

  std::string loss_reason() override {
    std::lock_guard<std::mutex> lock(outcome_->mutex);
    return outcome_->reason.empty() ? "" : str_cat("the in-process session ended: ", outcome_->reason);
  }

 private:
  void finish() {
    // The client's end is closed, so the loop sees Shutdown or end-of-stream and returns.
    if (thread_.joinable()) {
      if (thread_.get_id() == std::this_thread::get_id()) {
        thread_.detach();  // the session's own code dropped the last reference to its client
      } else {
        thread_.join();
      }
    }
    if (!dir_.empty()) {
      std::error_code ec;
      fs::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  // Shared with the thread, which may outlive this object when it had to be detached.
  struct Outcome {
    std::mutex mutex;
    std::string reason;  // what ended the serving loop
  };
  fs::path dir_;
  std::shared_ptr<Outcome> outcome_ = std::make_shared<Outcome>();
  std::thread thread_;
};

// ---- connect_popen ----

std::string describe_status(pid_t pid, int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    return str_cat("the server process ", pid, " was killed by signal ", sig, " (", ::strsignal(sig), ")");
  }
  if (WIFEXITED(status)) return str_cat("the server process ", pid, " exited with status ", WEXITSTATUS(status));
  return str_cat("the server process ", pid, " ended with wait status ", status);
}

// A child server process: reaped when the channel closes, asked about when the stream ends.
class ChildProcess final : public ChannelPeer {
 public:
  ChildProcess(pid_t pid, int exit_timeout_ms) : pid_(pid), exit_timeout_ms_(exit_timeout_ms) {}
  ~ChildProcess() override { reap(); }

  pid_t pid() const { return pid_; }

  void on_channel_closed() override { reap(); }

  std::string loss_reason() override {
    std::lock_guard<std::mutex> lock(mutex_);
    // It has closed its end or broken the pipe; give it a moment to finish dying.
    if (!wait_exit_locked(2'000)) return str_cat("the server process ", pid_, " closed the connection but is still running");
    return describe_status(pid_, status_);
  }

 private:
  // Waits up to timeout_ms for the child to exit (reaping it); true when it has.
  bool wait_exit_locked(int timeout_ms) {
    if (reaped_) return true;
    auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
    auto pause = std::chrono::microseconds(200);
    for (;;) {
      // WNOWAIT: the exited child keeps its pid (and so its process group id) until we have
      // cleaned up the rest of its group below.
      siginfo_t info{};
      int rc = ::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT);
      if (rc == 0 && info.si_pid == pid_) break;
      if (rc < 0 && errno != EINTR) {  // not our child any more (someone else reaped it)
        reaped_ = true;
        status_ = 0;
        return true;
      }
      if (Clock::now() >= deadline) return false;
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20'000));
    }
    ::kill(-pid_, SIGKILL);  // whatever it left running in its process group
    while (::waitpid(pid_, &status_, 0) < 0 && errno == EINTR) {
    }
    reaped_ = true;
    return true;
  }

  void reap() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (reaped_) return;
    if (wait_exit_locked(exit_timeout_ms_)) return;
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
    wait_exit_locked(60'000);
  }

  const pid_t pid_;
  const int exit_timeout_ms_;
  std::mutex mutex_;
  bool reaped_ = false;
  int status_ = 0;
};

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() {
    if (::pipe2(fd, O_CLOEXEC) != 0) io_error("PopenSession: pipe: ", std::strerror(errno));
  }
  ~Pipe() {
    for (int f : fd) {
      if (f >= 0) ::close(f);
    }
  }
  int take(int i) { return std::exchange(fd[i], -1); }
};

}  // namespace

RPCSession connect_local(const LocalConnectOptions& options) {
  register_runtime_functions();
  static std::once_flag test_functions;
  std::call_once(test_functions, [] { register_test_functions(); });

  fs::path dir = make_work_dir(options.work_root);
  auto functions = std::make_shared<const SessionFunctions>(
      server_functions(dir, std::min<uint64_t>(uint64_t{64} << 20, options.limits.max_packet_bytes)));
  auto [client, server] = channel_pair();
  auto peer = std::make_shared<ServingThread>(dir);
  peer->start(std::move(server), options.limits, std::move(functions), options.verbose);
  client.attach_peer(peer);
  ConnectOptions connect;
  connect.limits = options.limits;
  return RPCSession::over_channel(std::move(client), connect);
}

RPCSession connect_popen(const std::vector<std::string>& command, const PopenOptions& options, int* child_pid) {
  if (command.empty() || command[0].empty()) value_error("PopenSession: the command is empty");
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) ::signal(SIGPIPE, SIG_IGN);

  Pipe to_child, from_child, exec_error;
  std::vector<std::string> args = command;
  int child_read = to_child.fd[0], child_write = from_child.fd[1];
  if (options.pipe_args == PipeArgs::kAnvil) {
    args.push_back("--pipe-fds");
    args.push_back(str_cat(child_read, ",", child_write));
  } else {
    args.push_back(str_cat(child_read));
    args.push_back(str_cat(child_write));
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  // Only async-signal-safe calls between fork and exec (this process may have threads).
  pid_t pid = ::fork();
  if (pid < 0) io_error("PopenSession: fork: ", std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group: closing the session ends whatever it started too
    ::fcntl(child_read, F_SETFD, 0);  // the child's two ends survive exec; everything else closes
    ::fcntl(child_write, F_SETFD, 0);
    ::execvp(argv[0], argv.data());
    int err = errno;
    ssize_t ignored = ::write(exec_error.fd[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // also from here, so the group exists whichever runs first
  auto child = std::make_shared<ChildProcess>(pid, options.exit_timeout_ms);
  ::close(to_child.take(0));
  ::close(from_child.take(1));
  ::close(exec_error.take(1));
  int err = 0;
  ssize_t n;
  while ((n = ::read(exec_error.fd[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  if (n == static_cast<ssize_t>(sizeof err)) {
    child->on_channel_closed();  // reap it
    io_error("PopenSession: cannot run '", command[0], "': ", std::strerror(err));
  }
  if (child_pid != nullptr) *child_pid = pid;
  Channel channel(from_child.take(0), to_child.take(1), str_cat("pipe to ", command[0], " (pid ", pid, ")"));
  channel.attach_peer(child);
  return RPCSession::over_channel(std::move(channel), options.connect);
}

}  // namespace anvil::rpc
