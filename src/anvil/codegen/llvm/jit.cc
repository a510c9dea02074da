// The ORC LLJIT wrapper.
#include "anvil/codegen/llvm/jit.h"

#include <algorithm>

#include <llvm/ExecutionEngine/JITSymbol.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/MemoryBuffer.h>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/llvm_init.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module/library_module.h"

namespace anvil::codegen {
namespace {

void check(llvm::Error error, const std::string& what) {
  if (error) runtime_error("JIT: ", what, ": ", llvm::toString(std::move(error)));
}

std::vector<std::string> split_features(const std::string& features) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < features.size()) {
    size_t comma = features.find(',', start);
    if (comma == std::string::npos) comma = features.size();
    if (comma > start) out.push_back(features.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

template <typename Fn>
void* function_address(Fn* fn) {
  return reinterpret_cast<void*>(fn);
}

}  // namespace

LLVMJit::LLVMJit(const LLVMTargetSpec& spec) {
  initialize_llvm();
  if (!spec.is_host)
    not_implemented_error("JIT: code for '", spec.triple, "' cannot run in this process (host '", host_cpu().triple,
                          "'); export it with export_library and load it on a matching machine");
  std::string missing = missing_host_features(spec);
  if (!missing.empty())
    not_implemented_error("JIT: the target (CPU '", spec.cpu, "') uses features this machine lacks: ", missing);

  llvm::orc::JITTargetMachineBuilder machine{llvm::Triple(spec.triple)};
  machine.setCPU(spec.cpu);
  machine.addFeatures(split_features(spec.features));
  static constexpr llvm::CodeGenOpt::Level kLevels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                        llvm::CodeGenOpt::Default, llvm::CodeGenOpt::Aggressive};
  machine.setCodeGenOptLevel(kLevels[std::clamp(spec.opt_level, 0, 3)]);
  machine.setRelocationModel(llvm::Reloc::PIC_);
  machine.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Fast;
  if (spec.fast_math) {
    machine.getOptions().UnsafeFPMath = true;
    machine.getOptions().NoInfsFPMath = true;
    machine.getOptions().NoNaNsFPMath = true;
    machine.getOptions().NoSignedZerosFPMath = true;
  }
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(machine)).create();
  if (!jit) runtime_error("JIT: cannot create an LLJIT for '", spec.triple, "': ", llvm::toString(jit.takeError()));
  jit_ = std::move(*jit);

  llvm::orc::JITDylib& main = jit_->getMainJITDylib();
  llvm::orc::SymbolMap runtime;
  auto define = [&](const char* name, void* address) {
    runtime[jit_->mangleAndIntern(name)] = llvm::JITEvaluatedSymbol(
        llvm::pointerToJITTargetAddress(address), llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
  };
  define("AnvilGetRuntimeApi", function_address(&AnvilGetRuntimeApi));
  define("AnvilErrorSet", function_address(&AnvilErrorSet));
  define("AnvilParallelLaunch", function_address(&AnvilParallelLaunch));
  define("AnvilParallelBarrier", function_address(&AnvilParallelBarrier));
  check(main.define(llvm::orc::absoluteSymbols(std::move(runtime))), "defining the runtime's entry points");
  // Anvil's own symbols (`__anvil_*`) always come from the added code, never from another
  // library that happens to be loaded.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      jit_->getDataLayout().getGlobalPrefix(),
      [](const llvm::orc::SymbolStringPtr& name) { return !(*name).startswith("__anvil_"); });
  if (!process) runtime_error("JIT: cannot search the process's symbols: ", llvm::toString(process.takeError()));
  main.addGenerator(std::move(*process));
}

LLVMJit::~LLVMJit() = default;

void LLVMJit::add_object(const std::string& object, const std::string& name) {
  check(jit_->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(object, name)), "adding object '" + name + "'");
}

void LLVMJit::add_module(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context) {
  std::string name = module->getName().str();
  if (module->getDataLayout().isDefault()) module->setDataLayout(jit_->getDataLayout());
  check(jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context))),
        "adding module '" + name + "'");
}

void* LLVMJit::lookup(const std::string& name) {
  auto address = jit_->lookup(name);
  if (address) return address->toPtr<void*>();
  bool not_found = false;
  std::string message;
  llvm::handleAllErrors(
      address.takeError(), [&](const llvm::orc::SymbolsNotFound&) { not_found = true; },
      [&](const llvm::ErrorInfoBase& e) { message += e.message(); });
  if (not_found) return nullptr;
  runtime_error("JIT: linking '", name, "' failed: ", message);
}

void LLVMJit::bind_runtime_api() {
  if (auto* slot = static_cast<const AnvilRuntimeApi**>(lookup(kRuntimeApiSymbol))) *slot = AnvilGetRuntimeApi();
}

}  // namespace anvil::codegen
