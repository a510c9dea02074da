// Module lookup through imports, and loading by kind.
#include "anvil/runtime/module/module.h"

#include <array>
#include <map>
#include <mutex>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/runtime/registry.h"

namespace anvil {

ModuleNode::~ModuleNode() = default;

std::string ModuleNode::save_to_bytes() const {
  not_implemented_error("module of kind '", kind(), "' cannot be serialised");
}

void Module::import_module(const Module& other) {
  if (!other.defined()) value_error("Module::import_module: the module to import is undefined");
  // An import cycle would keep both modules alive forever and make lookups loop.
  std::vector<const ModuleNode*> stack{other.node()};
  std::unordered_set<const ModuleNode*> seen;
  while (!stack.empty()) {
    const ModuleNode* m = stack.back();
    stack.pop_back();
    if (m == node_.get())
      value_error("Module::import_module: importing a '", other.kind(), "' module into '", kind(),
                  "' would create an import cycle");
    if (!seen.insert(m).second) continue;
    for (const Module& child : m->imports()) stack.push_back(child.node());
  }
  node_->imports().push_back(other);
}

std::optional<Function> Module::find_function(const std::string& name, bool query_imports) const {
  if (auto fn = node_->get_local_function(name)) return fn;
  if (query_imports)
    for (const Module& child : node_->imports())
      if (auto fn = child.find_function(name, true)) return fn;
  return std::nullopt;
}

Function Module::get_function(const std::string& name, bool query_imports) const {
  if (!defined()) value_error("Module::get_function('", name, "'): the module is undefined");
  if (auto fn = find_function(name, query_imports)) return *fn;
  std::string known;
  auto names = node_->list_functions();
  for (size_t i = 0; i < names.size() && i < 10; ++i) known += (i ? ", " : "") + names[i];
  value_error("module of kind '", kind(), "' has no function named '", name, "'",
              known.empty() ? "" : " (it defines: " + known + (names.size() > 10 ? ", ..." : "") + ")");
}

namespace {

struct NativeLoaders {
  std::mutex mu;
  std::map<std::string, ModuleLoader, std::less<>> by_kind;
};

NativeLoaders& native_loaders() {
  static NativeLoaders* loaders = new NativeLoaders;  // never destroyed: used until exit
  return *loaders;
}

}  // namespace

void register_module_loader(const std::string& kind, ModuleLoader loader) {
  NativeLoaders& l = native_loaders();
  std::lock_guard<std::mutex> lock(l.mu);
  l.by_kind[kind] = loader;
}

Module Module::load_from_bytes(const std::string& kind, std::string_view bytes,
                               const std::shared_ptr<void>& backing) {
  ModuleLoader native = nullptr;
  {
    NativeLoaders& l = native_loaders();
    std::lock_guard<std::mutex> lock(l.mu);
    if (auto it = l.by_kind.find(kind); it != l.by_kind.end()) native = it->second;
  }
  // The native loader reads the bytes where they are; a global function gets its own copy.
  if (native != nullptr) return native(bytes, backing);
  auto loader = Registry::find("module.loader." + kind);
  if (!loader)
    not_implemented_error("no loader for module kind '", kind,
                          "' (global function 'module.loader.", kind, "' is not registered)");
  return (*loader)(Value::bytes(std::string(bytes))).as_module();
}

}  // namespace anvil
