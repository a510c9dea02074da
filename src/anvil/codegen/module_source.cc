// Source text of host-code modules and the compiler's global functions (see module_source.h).
#include "anvil/codegen/module_source.h"

#include <mutex>

#include "anvil/base/error.h"
#include "anvil/codegen/c/c_source_module.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/runtime/registry.h"

namespace anvil::codegen {

std::string module_source(const Module& m, std::string_view format) {
  if (!m.defined()) value_error("get_source: the module is undefined");
  if (is_llvm_module(m)) return llvm_module_source(m, format.empty() ? "ll" : format);
  if (m.kind() == "c") {
    if (!format.empty() && format != "c")
      value_error("get_source: a module of kind 'c' has C source only, not '", format, "'");
    return c_source_of(m);
  }
  value_error("get_source: a module of kind '", m.kind(), "' has no source text");
}

void register_codegen_functions() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_packed("runtime.ModuleGetSource", [](Args args) -> Value {
      if (args.size() != 2)
        type_error("runtime.ModuleGetSource expects 2 arguments (module, format), got ", args.size());
      return Value(module_source(args[0].as_module(), args[1].as_string()));
    });
  });
}

}  // namespace anvil::codegen
