// The one error type of Anvil: an exception carrying a kind (value, type, index, ...) and a
// message that names the failed operation, the offending input and what was expected.
// Compiler and runtime throw it; Python maps each kind to the matching exception.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace anvil {

enum class ErrorKind : int32_t {
#define ANVIL_ERROR_KIND(name, text, code) name = code,
#include "anvil/base/error_kinds.def"
#undef ANVIL_ERROR_KIND
};

// "ValueError", "TypeError", ...; "UnknownError" for a code outside the list.
std::string_view error_kind_name(ErrorKind kind);
// Maps a C ABI code back to a kind; unknown codes become kRuntime.
ErrorKind error_kind_from_code(int32_t code);

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// Concatenates any streamable values: str_cat("expected ", 3, " dims").
template <typename... Args>
std::string str_cat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

// Throw helpers: throw_error(ErrorKind::kValue, "reshape: ", n, " elements ...").
template <typename... Args>
[[noreturn]] void throw_error(ErrorKind kind, Args&&... args) {
  throw Error(kind, str_cat(std::forward<Args>(args)...));
}
template <typename... Args>
[[noreturn]] void value_error(Args&&... args) {
  throw_error(ErrorKind::kValue, std::forward<Args>(args)...);
}
template <typename... Args>
[[noreturn]] void type_error(Args&&... args) {
  throw_error(ErrorKind::kType, std::forward<Args>(args)...);
}
template <typename... Args>
[[noreturn]] void index_error(Args&&... args) {
  throw_error(ErrorKind::kIndex, std::forward<Args>(args)...);
}
template <typename... Args>
[[noreturn]] void not_implemented_error(Args&&... args) {
  throw_error(ErrorKind::kNotImplemented, std::forward<Args>(args)...);
}
template <typename... Args>
[[noreturn]] void runtime_error(Args&&... args) {
  throw_error(ErrorKind::kRuntime, std::forward<Args>(args)...);
}
template <typename... Args>
[[noreturn]] void io_error(Args&&... args) {
  throw_error(ErrorKind::kIO, std::forward<Args>(args)...);
}

[[noreturn]] void internal_check_failed(const char* file, int line, const char* condition,
                                        const std::string& detail);

}  // namespace anvil

// Guards an internal invariant; a failure is a bug in Anvil, never a user mistake.
#define ANVIL_ICHECK(cond, ...)                                                           \
  do {                                                                                    \
    if (!(cond)) [[unlikely]]                                                             \
      ::anvil::internal_check_failed(__FILE__, __LINE__, #cond, ::anvil::str_cat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
