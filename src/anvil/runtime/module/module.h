// Module: a named collection of functions plus imported sub-modules — a loaded kernel library,
// a device-code module, a VM executable. Modules that can be serialised travel inside a kernel
// library's embedded blob (module/blob.h) and come back through the loader registered for their
// kind: a native loader (register_module_loader; it reads the bytes in place and may keep views
// of them) or else the global function "module.loader.<kind>" (bytes -> Module, given a copy).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/function.h"
#include "anvil/runtime/object.h"

namespace anvil {

class Module;

class ModuleNode : public Object {
 public:
  ~ModuleNode() override;  // out of line: Module is incomplete here
  std::string_view type_key() const override { return "runtime.Module"; }
  // The module kind, also its serialisation key: "library", "params", "vm.executable", ...
  virtual std::string kind() const = 0;
  // The function defined by this module itself, or nullopt.
  virtual std::optional<Function> get_local_function(const std::string& name) = 0;
  // Names this module knows it defines (may be incomplete for libraries without a name table).
  virtual std::vector<std::string> list_functions() const { return {}; }
  // Serialisable modules return true and implement save_to_bytes; their kind needs a loader.
  virtual bool is_binary_serializable() const { return false; }
  virtual std::string save_to_bytes() const;

  std::vector<Module>& imports() { return imports_; }
  const std::vector<Module>& imports() const { return imports_; }

 private:
  std::vector<Module> imports_;
};

class Module {
 public:
  Module() = default;
  explicit Module(Ref<ModuleNode> node) : node_(std::move(node)) {}

  // Loads a kernel library (.so) and rebuilds the module tree packed in its blob; the root is
  // returned (the library itself when it has no blob). Throws IOError / ValueError on failure.
  static Module load_from_file(const std::string& path);
  // Rebuilds a module of `kind` from save_to_bytes() output through its registered loader.
  // `backing`, when set, owns the memory `bytes` lie in and keeps it unchanged for as long as it
  // lives (a loaded library's blob): a native loader may then point into the bytes instead of
  // copying them (VM constants do), holding `backing`. Without it, nothing refers to `bytes`
  // after the call.
  static Module load_from_bytes(const std::string& kind, std::string_view bytes,
                                const std::shared_ptr<void>& backing = nullptr);

  bool defined() const { return static_cast<bool>(node_); }
  ModuleNode* node() const { return node_.get(); }
  std::string kind() const { return node_->kind(); }
  const std::vector<Module>& imports() const { return node_->imports(); }
  void import_module(const Module& other);

  // Searches this module, then (when query_imports) its imports depth-first.
  std::optional<Function> find_function(const std::string& name, bool query_imports = true) const;
  // Like find_function but throws ValueError naming the function and the module.
  Function get_function(const std::string& name, bool query_imports = true) const;
  Function operator[](const std::string& name) const { return get_function(name); }

  bool same_as(const Module& other) const { return node_ == other.node_; }

 private:
  Ref<ModuleNode> node_;
};

// A loader that reads save_to_bytes() output without a copy; see Module::load_from_bytes for
// `backing`. Registered once per kind, before loading (the runtime registers its own kinds).
using ModuleLoader = Module (*)(std::string_view bytes, const std::shared_ptr<void>& backing);
void register_module_loader(const std::string& kind, ModuleLoader loader);

}  // namespace anvil
