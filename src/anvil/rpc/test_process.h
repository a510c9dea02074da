// Test helper: runs a command as a child process with its output in a log file, waits for a
// line in that log, and always ends the child (SIGTERM, then SIGKILL) when it goes out of scope.
// Used by the RPC tests that need real server processes (ours and TVM's).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace anvil::rpc::testing {

class ChildProcess {
 public:
  explicit ChildProcess(std::vector<std::string> argv) {
    char pattern[] = "/tmp/anvil-rpc-test-log-XXXXXX";
    int fd = ::mkstemp(pattern);
    log_path_ = pattern;
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::setpgid(0, 0);
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::execvp(raw[0], raw.data());
      ::_exit(127);
    }
    ::close(fd);
  }
  ~ChildProcess() {
    stop();
    ::unlink(log_path_.c_str());
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Ends the child (and its process group): SIGTERM, up to 3 s, then SIGKILL. Returns the wait status.
  int stop() {
    if (pid_ <= 0) return status_;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 300; ++i) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
        ::kill(-pid_, SIGKILL);
        pid_ = -1;
        return status_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(-pid_, SIGKILL);
    ::waitpid(pid_, &status_, 0);
    pid_ = -1;
    return status_;
  }
  bool running() {
    if (pid_ <= 0) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }

  std::string log() const {
    std::ifstream in(log_path_);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  // The first submatch of `pattern` in the log, waiting up to timeout_s; nullopt if the child
  // exits or the time runs out.
  std::optional<std::string> wait_for(const std::string& pattern, double timeout_s = 20) {
    std::regex re(pattern);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      std::string text = log();
      if (std::regex_search(text, m, re)) return m.size() > 1 ? m[1].str() : m[0].str();
      if (!running()) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return std::nullopt;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  std::string log_path_;
};

}  // namespace anvil::rpc::testing
