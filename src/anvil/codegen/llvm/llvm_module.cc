// The "llvm" module kind.
#include "anvil/codegen/llvm/llvm_module.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <algorithm>
#include <mutex>
#include <optional>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/emit.h"
#include "anvil/codegen/llvm/jit.h"
#include "anvil/codegen/llvm/kernel_abi.h"
#include "anvil/codegen/llvm/llvm_target.h"
#include "anvil/codegen/llvm/optimize.h"
#include "anvil/runtime/module/library_module.h"

namespace anvil::codegen {
namespace {

class LLVMModuleNode final : public ModuleNode {
 public:
  LLVMModuleNode(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context, Target target)
      : context_(std::move(context)), module_(std::move(module)), target_(std::move(target)) {
    spec_ = resolve_llvm_target(target_);
    machine_ = create_target_machine(spec_);
    prepare_module_for_target(*module_, *machine_);
    optimize_module(*module_, *machine_);
    std::string_view prefix = kKernelSymbolPrefix;
    for (const llvm::Function& f : *module_) {
      llvm::StringRef name = f.getName();
      if (!f.isDeclaration() && name.startswith(prefix)) names_.push_back(name.drop_front(prefix.size()).str());
    }
  }

  std::string kind() const override { return kLLVMModuleKind; }
  std::vector<std::string> list_functions() const override { return names_; }

  std::optional<Function> get_local_function(const std::string& name) override {
    if (std::find(names_.begin(), names_.end(), name) == names_.end()) return std::nullopt;
    void* address = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (!jit_) {
        auto jit = std::make_unique<LLVMJit>(spec_);
        jit->add_object(object_locked(), module_->getName().str());
        jit->bind_runtime_api();
        jit_ = std::move(jit);
      }
      address = jit_->lookup(kernel_symbol_name(name));
    }
    ANVIL_ICHECK(address != nullptr, "JIT lost kernel '", name, "'");
    return make_kernel_function(reinterpret_cast<AnvilKernelFn>(address), name, Ref<Object>(this));
  }

  std::string source(std::string_view format) {
    std::lock_guard lock(mutex_);
    if (format == "ll") return module_to_ir_text(*module_);
    if (format == "asm" || format == "s") return emit_assembly(*module_, *machine_);
    value_error("get_source: an llvm module has formats 'll' and 'asm' (or 's'), not '", format, "'");
  }

  const std::string& object() {
    std::lock_guard lock(mutex_);
    return object_locked();
  }

  const Target& target() const { return target_; }
  const std::vector<std::string>& names() const { return names_; }

 private:
  const std::string& object_locked() {
    if (!object_) object_ = emit_object(*module_, *machine_);
    return *object_;
  }

  std::mutex mutex_;  // guards the LLVM objects, object_ and jit_
  std::unique_ptr<llvm::LLVMContext> context_;  // declared before module_: outlives it
  std::unique_ptr<llvm::Module> module_;
  Target target_;
  LLVMTargetSpec spec_;
  std::unique_ptr<llvm::TargetMachine> machine_;
  std::vector<std::string> names_;
  std::optional<std::string> object_;
  std::unique_ptr<LLVMJit> jit_;
};

LLVMModuleNode& as_llvm(const Module& m) {
  if (!is_llvm_module(m)) value_error("expected a module of kind 'llvm', got '", m.defined() ? m.kind() : "undefined", "'");
  return static_cast<LLVMModuleNode&>(*m.node());
}

}  // namespace

Module make_llvm_module(std::unique_ptr<llvm::Module> module, std::unique_ptr<llvm::LLVMContext> context,
                        const Target& target) {
  if (!module || !context) value_error("make_llvm_module: the module and its context are required");
  ANVIL_ICHECK(&module->getContext() == context.get(), "the llvm::Module does not belong to the given context");
  return Module(make_object<LLVMModuleNode>(std::move(module), std::move(context), target));
}

bool is_llvm_module(const Module& m) { return m.defined() && m.kind() == kLLVMModuleKind; }
const Target& llvm_module_target(const Module& m) { return as_llvm(m).target(); }
std::string llvm_module_source(const Module& m, std::string_view format) { return as_llvm(m).source(format); }
const std::string& llvm_module_object(const Module& m) { return as_llvm(m).object(); }
const std::vector<std::string>& llvm_module_function_names(const Module& m) { return as_llvm(m).names(); }

}  // namespace anvil::codegen
