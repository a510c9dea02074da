// LLVM types and globals of the kernel ABI.
#include "anvil/codegen/llvm/kernel_abi.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/Module.h>

#include <cstddef>

#include "anvil/base/error.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/module/library_module.h"

namespace anvil::codegen {
namespace {

// The struct types below spell runtime/c_abi.h out field by field; these fail the build when the
// header gains, loses or moves a field (kernel_abi_test.cc checks every offset and size under
// LLVM's DataLayout, and the function types against the C declarations).
constexpr size_t kPtr = sizeof(void*);
static_assert(sizeof(AnvilValue) == 16 && offsetof(AnvilValue, reserved) == 4 && offsetof(AnvilValue, v_int64) == 8,
              "AnvilValue changed: update kernel_abi_types().value and AnvilValueField");
static_assert(sizeof(AnvilRuntimeApi) == 8 + 6 * kPtr && offsetof(AnvilRuntimeApi, error_set) == 8 &&
                  offsetof(AnvilRuntimeApi, function_call) == 8 + 5 * kPtr,
              "AnvilRuntimeApi changed: update kernel_abi_types().runtime_api and RuntimeApiField");
static_assert(offsetof(AnvilParallelEnv, num_task) == kPtr,
              "AnvilParallelEnv changed: update kernel_abi_types().parallel_env and ParallelEnvField");
static_assert(offsetof(DLTensor, device) == kPtr && offsetof(DLTensor, ndim) == kPtr + 8 &&
                  offsetof(DLTensor, byte_offset) == offsetof(DLTensor, strides) + kPtr,
              "DLTensor is not the layout kernel_abi_types().tensor mirrors");

llvm::StructType* named_struct(llvm::LLVMContext& ctx, const char* name, llvm::ArrayRef<llvm::Type*> fields) {
  if (auto* existing = llvm::StructType::getTypeByName(ctx, name)) return existing;
  return llvm::StructType::create(ctx, fields, name);
}

}  // namespace

KernelAbiTypes kernel_abi_types(llvm::LLVMContext& ctx) {
  auto* i8 = llvm::Type::getInt8Ty(ctx);
  auto* i16 = llvm::Type::getInt16Ty(ctx);
  auto* i32 = llvm::Type::getInt32Ty(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* void_ty = llvm::Type::getVoidTy(ctx);
  KernelAbiTypes t{};
  t.value = named_struct(ctx, "anvil.Value", {i32, i32, i64});
  t.device = named_struct(ctx, "DLDevice", {i32, i32});
  t.dtype = named_struct(ctx, "DLDataType", {i8, i8, i16});
  t.tensor = named_struct(ctx, "DLTensor", {ptr, t.device, i32, t.dtype, ptr, ptr, i64});
  t.runtime_api = named_struct(ctx, "anvil.RuntimeApi", {i32, i32, ptr, ptr, ptr, ptr, ptr, ptr});
  t.parallel_env = named_struct(ctx, "anvil.ParallelEnv", {ptr, i32});
  t.kernel = llvm::FunctionType::get(i32, {ptr, i32, ptr}, false);
  t.parallel_lambda = llvm::FunctionType::get(i32, {i32, ptr, ptr}, false);
  t.error_set = llvm::FunctionType::get(void_ty, {i32, ptr}, false);
  t.parallel_launch = llvm::FunctionType::get(i32, {ptr, ptr, i32}, false);
  t.parallel_barrier = llvm::FunctionType::get(i32, {i32, ptr}, false);
  t.workspace_alloc = llvm::FunctionType::get(ptr, {i32, i32, i64}, false);
  t.workspace_free = llvm::FunctionType::get(i32, {i32, i32, ptr}, false);
  t.function_call = llvm::FunctionType::get(i32, {ptr, ptr, i32, ptr}, false);
  return t;
}

std::string kernel_symbol_name(std::string_view name) { return std::string(kKernelSymbolPrefix) + std::string(name); }

llvm::Function* get_or_create_kernel(llvm::Module& module, std::string_view name) {
  std::string symbol = kernel_symbol_name(name);
  KernelAbiTypes types = kernel_abi_types(module.getContext());
  if (llvm::Function* existing = module.getFunction(symbol)) {
    ANVIL_ICHECK(existing->getFunctionType() == types.kernel, "'", symbol, "' exists with another type");
    return existing;
  }
  auto* fn = llvm::Function::Create(types.kernel, llvm::GlobalValue::ExternalLinkage, symbol, module);
  fn->setVisibility(llvm::GlobalValue::DefaultVisibility);
  fn->getArg(0)->setName("args");
  fn->getArg(1)->setName("num_args");
  fn->getArg(2)->setName("ret");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  return fn;
}

llvm::GlobalVariable* get_or_create_runtime_api_global(llvm::Module& module) {
  if (auto* existing = module.getGlobalVariable(kRuntimeApiSymbol)) return existing;
  auto* ptr = llvm::PointerType::getUnqual(module.getContext());
  auto* global = new llvm::GlobalVariable(module, ptr, /*isConstant=*/false, llvm::GlobalValue::WeakAnyLinkage,
                                          llvm::ConstantPointerNull::get(ptr), kRuntimeApiSymbol);
  global->setVisibility(llvm::GlobalValue::DefaultVisibility);
  return global;
}

}  // namespace anvil::codegen
