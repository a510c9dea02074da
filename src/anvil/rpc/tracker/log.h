// Minimal timestamped logging for the tracker process, in the style of TVM's tracker
// ("2024-06-11 12:00:00.123 INFO bind to 0.0.0.0:9190"), written to stderr.
#pragma once

#include <string>

#include "anvil/base/error.h"

namespace anvil::rpc::tracker {

enum class LogLevel { kInfo = 0, kWarning = 1, kError = 2 };

// Messages below this level are dropped; --silent raises it to kWarning (as TVM does).
void set_log_level(LogLevel level);
void log_message(LogLevel level, const std::string& text);

template <typename... Args>
void log_info(Args&&... args) {
  log_message(LogLevel::kInfo, str_cat(std::forward<Args>(args)...));
}
template <typename... Args>
void log_warning(Args&&... args) {
  log_message(LogLevel::kWarning, str_cat(std::forward<Args>(args)...));
}

}  // namespace anvil::rpc::tracker
