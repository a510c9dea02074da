// Object, assembly and IR text emission (legacy pass manager: LLVM 16's code generator needs it).
#include "anvil/codegen/llvm/emit.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "anvil/base/error.h"

namespace anvil::codegen {
namespace {

std::string emit(const llvm::Module& module, llvm::TargetMachine& tm, llvm::CodeGenFileType type) {
  std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  if (tm.addPassesToEmitFile(passes, out, nullptr, type))
    runtime_error("LLVM target '", tm.getTargetTriple().str(), "' cannot emit ",
                  type == llvm::CGFT_ObjectFile ? "object files" : "assembly");
  passes.run(*copy);
  return std::string(buffer.data(), buffer.size());
}

}  // namespace

std::string emit_object(const llvm::Module& module, llvm::TargetMachine& tm) {
  return emit(module, tm, llvm::CGFT_ObjectFile);
}

std::string emit_assembly(const llvm::Module& module, llvm::TargetMachine& tm) {
  return emit(module, tm, llvm::CGFT_AssemblyFile);
}

std::string module_to_ir_text(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  out.flush();
  return text;
}

}  // namespace anvil::codegen
