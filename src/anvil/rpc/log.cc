// stderr logging for the RPC server, client, tracker and proxy (see log.h). One write(2) per
// line so that lines from the server and its session children do not interleave mid-line.
#include "anvil/rpc/log.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace anvil::rpc {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
thread_local int t_level = static_cast<int>(LogLevel::kInfo);  // this thread's floor

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kWarning:
      return "WARNING";
    case LogLevel::kError:
      return "ERROR";
  }
  return "?";
}

}  // namespace

void set_log_level(LogLevel level) { g_level.store(static_cast<int>(level)); }
LogLevel log_level() { return static_cast<LogLevel>(std::max(g_level.load(), t_level)); }

ScopedThreadLogLevel::ScopedThreadLogLevel(LogLevel level) : previous_(t_level) { t_level = static_cast<int>(level); }
ScopedThreadLogLevel::~ScopedThreadLogLevel() { t_level = previous_; }

void log_message(LogLevel level, const std::string& message) {
  if (level < log_level()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t secs = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char ms[8];
  std::snprintf(ms, sizeof ms, ".%03d", static_cast<int>(millis));
  std::string line = str_cat(stamp, ms, " ", level_name(level), " anvil.rpc[", getpid(), "] ", message, "\n");
  // A failed log write has nowhere to be reported; ignore it.
  ssize_t unused = ::write(STDERR_FILENO, line.data(), line.size());
  (void)unused;
}

}  // namespace anvil::rpc
