// Error kind names and the internal-check failure path.
#include "anvil/base/error.h"

namespace anvil {

std::string_view error_kind_name(ErrorKind kind) {
  switch (kind) {
#define ANVIL_ERROR_KIND(name, text, code) \
  case ErrorKind::name:                    \
    return text;
#include "anvil/base/error_kinds.def"
#undef ANVIL_ERROR_KIND
  }
  return "UnknownError";
}

ErrorKind error_kind_from_code(int32_t code) {
  switch (code) {
#define ANVIL_ERROR_KIND(name, text, c) \
  case c:                               \
    return ErrorKind::name;
#include "anvil/base/error_kinds.def"
#undef ANVIL_ERROR_KIND
    default:
      return ErrorKind::kRuntime;
  }
}

void internal_check_failed(const char* file, int line, const char* condition,
                           const std::string& detail) {
  std::string message = str_cat("internal error at ", file, ":", line, ": check '", condition, "' failed");
  if (!detail.empty()) message += ": " + detail;
  message += " (this is a bug in Anvil; please report it)";
  throw Error(ErrorKind::kInternal, message);
}

}  // namespace anvil
