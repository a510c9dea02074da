// The global function registry: name -> Function. RPC's get_function, the VM's builtins and
// Python's get_global_func all look here. Subsystems register through one explicit call each
// (register_runtime_functions() and friends), never through static initialisers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/function.h"

namespace anvil {

class Registry {
 public:
  // Throws ValueError if the name is taken and override_existing is false.
  static void set(const std::string& name, Function fn, bool override_existing = false);
  // Empty when absent.
  static std::optional<Function> find(std::string_view name);
  // Throws ValueError naming the function (and close matches by prefix) when absent.
  static Function get(std::string_view name);
  static bool remove(std::string_view name);
  // Sorted names starting with prefix ("" lists all).
  static std::vector<std::string> list(std::string_view prefix = "");
};

// The one-statement form: register_function("math.add", [](int64_t a, int64_t b) { return a + b; });
template <typename F>
void register_function(const std::string& name, F fn, bool override_existing = false) {
  Registry::set(name, Function::from_typed(std::move(fn), name), override_existing);
}
inline void register_packed(const std::string& name, PackedBody body, bool override_existing = false) {
  Registry::set(name, Function::from_packed(std::move(body), name), override_existing);
}

}  // namespace anvil
