// Registers the VM's global functions: the executable loader and the builtins.
#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"
#include "anvil/runtime/vm/profiler.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {

void register_vm_functions() {
  // Libraries load their executable through this one, in place (constants not copied).
  register_module_loader(kExecutableKind, [](std::string_view bytes, const std::shared_ptr<void>& backing) {
    return Executable::load_from_bytes(bytes, backing).as_module();
  });
  register_packed(std::string("module.loader.") + kExecutableKind, [](Args args) -> Value {
    if (args.size() != 1) type_error("module.loader.vm.executable expects 1 argument (bytes)");
    return Value(Executable::load_from_bytes(args[0].as_bytes()).as_module());
  });
  register_builtins();
  register_vm_profiling();
}

}  // namespace anvil::vm
