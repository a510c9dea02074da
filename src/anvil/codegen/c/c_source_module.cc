// The "c" module kind.
#include "anvil/codegen/c/c_source_module.h"

#include "anvil/base/error.h"

namespace anvil::codegen {
namespace {

class CSourceModuleNode final : public ModuleNode {
 public:
  CSourceModuleNode(std::string source, std::vector<std::string> names)
      : source_(std::move(source)), names_(std::move(names)) {}
  std::string kind() const override { return "c"; }
  std::optional<Function> get_local_function(const std::string& name) override {
    for (const auto& n : names_)
      if (n == name)
        not_implemented_error("function '", name,
                              "' of a C source module cannot run before it is compiled: call export_library "
                              "and load the result");
    return std::nullopt;
  }
  std::vector<std::string> list_functions() const override { return names_; }

  const std::string source_;
  const std::vector<std::string> names_;
};

const CSourceModuleNode& as_c(const Module& m) {
  if (!m.defined() || m.kind() != "c") value_error("expected a module of kind 'c'");
  return static_cast<const CSourceModuleNode&>(*m.node());
}

}  // namespace

Module make_c_source_module(std::string source, std::vector<std::string> function_names) {
  return Module(make_object<CSourceModuleNode>(std::move(source), std::move(function_names)));
}

bool is_host_code_module(const Module& m) { return m.kind() == "c" || m.kind() == "llvm"; }

const std::string& c_source_of(const Module& m) { return as_c(m).source_; }
const std::vector<std::string>& c_function_names_of(const Module& m) { return as_c(m).names_; }

}  // namespace anvil::codegen
