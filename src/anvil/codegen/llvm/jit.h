// LLVMJit: an ORC LLJIT instance for host code. Code goes in as relocatable objects (what
// emit_object produces, so JIT'd and exported code are the same machine code) or as IR modules
// (compiled with the JIT's own TargetMachine, without the optimisation pipeline); functions come
// out as addresses. Symbols the code leaves undefined resolve against the runtime's C entry
// points (AnvilGetRuntimeApi, AnvilErrorSet, AnvilParallelLaunch, AnvilParallelBarrier) and
// then against everything loaded in the process (libc, libm, ...).
//
// Kernels reach the runtime through `__anvil_runtime_api` (docs/abi.md); bind_runtime_api()
// stores the table there, exactly as load_module does for a dlopen'ed library.
// Thread-safe for lookups; adding code and binding is meant to happen before first use.
#pragma once

#include <memory>
#include <string>

#include "anvil/codegen/llvm/llvm_target.h"

namespace llvm {
class LLVMContext;
class Module;
namespace orc {
class LLJIT;
}
}  // namespace llvm

namespace anvil::codegen {

class LLVMJit {
 public:
  // NotImplementedError if the spec is not for this machine (spec.is_host false) or enables
  // CPU features this machine lacks (its code could die of SIGILL); RuntimeError if ORC fails.
  explicit LLVMJit(const LLVMTargetSpec& spec);
  ~LLVMJit();
  LLVMJit(const LLVMJit&) = delete;
  LLVMJit& operator=(const LLVMJit&) = delete;

  // Adds a relocatable object (copied). `name` labels it in error messages.
  void add_object(const std::string& object, const std::string& name);
  // Adds an IR module with the context that owns it. Run prepare_module_for_target and
  // optimize_module first if the code should be optimised.
  void add_module(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context);

  // The address of a symbol the added code defines (links it on first use), or nullptr if no
  // added code defines it. RuntimeError naming the symbol if linking fails (e.g. an undefined
  // external symbol).
  void* lookup(const std::string& name);

  // Writes the runtime's API table into `__anvil_runtime_api` if the added code defines it.
  void bind_runtime_api();

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace anvil::codegen
