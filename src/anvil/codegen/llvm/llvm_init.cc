// One-time LLVM target registration.
#include "anvil/codegen/llvm/llvm_init.h"

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace anvil::codegen {

void initialize_llvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

}  // namespace anvil::codegen
