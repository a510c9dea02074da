// Source text of host-code modules and the compiler's global functions (see module_source.h).
#include "anvil/codegen/module_source.h"

#include <mutex>

#include "anvil/base/error.h"
#include "anvil/codegen/codegen_registry.h"
#include "anvil/runtime/registry.h"

namespace anvil::codegen {

std::string module_source(const Module& m, std::string_view format) {
  if (!m.defined()) value_error("get_source: the module is undefined");
  // The code generator that makes this module kind knows how to read it (codegen_registry.cc).
  const CodegenEntry* entry = find_codegen_for_module(m.kind());
  if (entry != nullptr && entry->source != nullptr) return entry->source(m, format);
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
