// The global function registry (a mutex-guarded sorted map).
#include "anvil/runtime/registry.h"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace anvil {
namespace {

struct Table {
  std::shared_mutex mutex;
  std::map<std::string, Function, std::less<>> functions;
};

Table& table() {
  static Table* t = new Table();  // never destroyed: functions may be looked up during exit
  return *t;
}

}  // namespace

void Registry::set(const std::string& name, Function fn, bool override_existing) {
  if (name.empty()) value_error("Registry::set: the function name is empty");
  if (!fn.defined()) value_error("Registry::set: function '", name, "' is undefined");
  auto& t = table();
  std::unique_lock lock(t.mutex);
  auto [it, inserted] = t.functions.try_emplace(name, fn);
  if (!inserted) {
    if (!override_existing)
      value_error("Registry::set: a global function named '", name, "' is already registered");
    it->second = std::move(fn);
  }
}

std::optional<Function> Registry::find(std::string_view name) {
  auto& t = table();
  std::shared_lock lock(t.mutex);
  auto it = t.functions.find(name);
  if (it == t.functions.end()) return std::nullopt;
  return it->second;
}

Function Registry::get(std::string_view name) {
  if (auto fn = find(name)) return *fn;
  std::string hint;
  size_t dot = name.rfind('.');
  if (dot != std::string_view::npos) {
    auto near = list(name.substr(0, dot + 1));
    if (!near.empty()) {
      hint = "; functions under '" + std::string(name.substr(0, dot + 1)) + "':";
      for (size_t i = 0; i < near.size() && i < 8; ++i) hint += " " + near[i];
      if (near.size() > 8) hint += " ...";
    }
  }
  value_error("no global function named '", name, "'", hint);
}

bool Registry::remove(std::string_view name) {
  auto& t = table();
  std::unique_lock lock(t.mutex);
  auto it = t.functions.find(name);
  if (it == t.functions.end()) return false;
  t.functions.erase(it);
  return true;
}

std::vector<std::string> Registry::list(std::string_view prefix) {
  auto& t = table();
  std::shared_lock lock(t.mutex);
  std::vector<std::string> names;
  for (auto it = t.functions.lower_bound(prefix); it != t.functions.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    names.push_back(it->first);
  }
  return names;
}

}  // namespace anvil
