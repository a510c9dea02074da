// Minimal logging for everything `anvil-rpc` runs (server, client, tracker, proxy), in one format:
// one line per event on stderr, "2024-06-11 12:00:00.123 INFO anvil.rpc[4242] message" (sessions
// run in forked children, so the pid tells them apart). --silent raises the level.
#pragma once

#include <string>
#include <utility>

#include "anvil/base/error.h"

namespace anvil::rpc {

enum class LogLevel : int { kInfo = 0, kWarning = 1, kError = 2 };

// Messages below this level are dropped. Default kInfo.
void set_log_level(LogLevel level);
// The level in effect on the calling thread: the process's, or higher under a ScopedThreadLogLevel.
LogLevel log_level();

// Raises the level for the calling thread only, while it lives: an in-process session's serving
// thread (LocalSession) stays quiet without silencing the rest of the process.
class ScopedThreadLogLevel {
 public:
  explicit ScopedThreadLogLevel(LogLevel level);
  ~ScopedThreadLogLevel();
  ScopedThreadLogLevel(const ScopedThreadLogLevel&) = delete;
  ScopedThreadLogLevel& operator=(const ScopedThreadLogLevel&) = delete;

 private:
  int previous_;
};
void log_message(LogLevel level, const std::string& message);

template <typename... Args>
void log_info(Args&&... args) {
  if (log_level() <= LogLevel::kInfo) log_message(LogLevel::kInfo, str_cat(std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(Args&&... args) {
  if (log_level() <= LogLevel::kWarning) log_message(LogLevel::kWarning, str_cat(std::forward<Args>(args)...));
}
template <typename... Args>
void log_error(Args&&... args) {
  log_message(LogLevel::kError, str_cat(std::forward<Args>(args)...));
}

}  // namespace anvil::rpc
