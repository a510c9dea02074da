// Minimal logging for the RPC server and client: one line per event on stderr, with a time stamp
// and the process id (sessions run in forked children, so the pid tells them apart). --silent
// lowers the level to errors only.
#pragma once

#include <string>
#include <utility>

#include "anvil/base/error.h"

namespace anvil::rpc {

enum class LogLevel : int { kInfo = 0, kWarning = 1, kError = 2 };

// Messages below this level are dropped. Default kInfo.
void set_log_level(LogLevel level);
LogLevel log_level();
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
