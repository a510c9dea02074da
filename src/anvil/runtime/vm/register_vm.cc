// Registers the VM's global functions: the executable loader and the builtins.
#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"
#include "anvil/runtime/vm/profiler.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {

void register_vm_functions() {
  register_packed(std::string("module.loader.") + kExecutableKind, [](Args args) -> Value {
    if (args.size() != 1) type_error("module.loader.vm.executable expects 1 argument (bytes)");
    return Value(Executable::load_from_bytes(args[0].as_bytes()).as_module());
  });
  register_builtins();
  register_vm_profiling();
}

}  // namespace anvil::vm
