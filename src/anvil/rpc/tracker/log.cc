// Timestamped stderr logging for the tracker (see log.h).
#include "anvil/rpc/tracker/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace anvil::rpc::tracker {
namespace {
std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

const char* level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarning: return "WARNING";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}
}  // namespace

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }

void log_message(LogLevel level, const std::string& text) {
  if (static_cast<int>(level) < g_level.load()) return;
  auto now = std::chrono::system_clock::now();
  std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()) % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &local);
  // One fprintf per line so lines from different threads never interleave.
  std::fprintf(stderr, "%s.%03d %s %s\n", stamp, static_cast<int>(millis.count()), level_name(level),
               text.c_str());
}

}  // namespace anvil::rpc::tracker
