// Module: a named collection of functions plus imported sub-modules — a loaded kernel library,
// a device-code module, a VM executable. Modules that can be serialised travel inside a kernel
// library's embedded blob (module/blob.h) and come back through the loader registered for their
// kind as the global function "module.loader.<kind>" (bytes -> Module).
#pragma once

#include <optional>
#include <string>
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
  static Module load_from_bytes(const std::string& kind, const std::string& bytes);

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

}  // namespace anvil
