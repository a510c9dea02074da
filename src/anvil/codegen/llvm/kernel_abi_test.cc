// The LLVM mirror of the kernel ABI (kernel_abi.h) against runtime/c_abi.h itself: under the host's
// DataLayout every struct the code generator builds has the C compiler's size and, for every
// field number it uses, the C field's offset and size; the function types are derived from the C
// declarations' types. A field added to or reordered in c_abi.h fails here (and the static_asserts
// in kernel_abi.cc fail the build).
#include "anvil/codegen/llvm/kernel_abi.h"

#include <gtest/gtest.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Target/TargetMachine.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "anvil/codegen/llvm/llvm_target.h"
#include "anvil/runtime/c_abi.h"

namespace anvil::codegen {
namespace {

// The LLVM type of a C scalar or pointer type, as the ABI uses them.
template <typename T>
llvm::Type* llvm_type_of(llvm::LLVMContext& ctx) {
  if constexpr (std::is_void_v<T>) return llvm::Type::getVoidTy(ctx);
  else if constexpr (std::is_pointer_v<T>) return llvm::PointerType::getUnqual(ctx);
  else if constexpr (std::is_integral_v<T>) return llvm::Type::getIntNTy(ctx, sizeof(T) * 8);
  else static_assert(std::is_void_v<T>, "a type the kernel ABI does not use");
}

// The LLVM function type of a C function pointer type.
template <typename R, typename... A>
llvm::FunctionType* llvm_function_type_of(llvm::LLVMContext& ctx, R (*)(A...)) {
  return llvm::FunctionType::get(llvm_type_of<R>(ctx), {llvm_type_of<A>(ctx)...}, false);
}
template <typename F>
llvm::FunctionType* fn_of(llvm::LLVMContext& ctx) {
  return llvm_function_type_of(ctx, static_cast<F>(nullptr));
}

class KernelAbi : public ::testing::Test {
 protected:
  void SetUp() override {
    tm_ = create_target_machine(resolve_llvm_target(Target::parse("llvm")));
    layout_ = std::make_unique<llvm::DataLayout>(tm_->createDataLayout());
    types_ = kernel_abi_types(ctx_);
  }
  // Offset and size of field `index` of `type` under the host layout, and the struct's size.
  uint64_t offset(llvm::StructType* type, unsigned index) const {
    return layout_->getStructLayout(type)->getElementOffset(index);
  }
  uint64_t field_size(llvm::StructType* type, unsigned index) const {
    return layout_->getTypeAllocSize(type->getElementType(index));
  }
  uint64_t size(llvm::StructType* type) const { return layout_->getTypeAllocSize(type); }

  llvm::LLVMContext ctx_;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::unique_ptr<llvm::DataLayout> layout_;
  KernelAbiTypes types_{};
};

#define EXPECT_FIELD(type, index, c_struct, c_field)                                      \
  do {                                                                                    \
    EXPECT_EQ(offset(type, index), offsetof(c_struct, c_field)) << #c_struct "." #c_field; \
    EXPECT_EQ(field_size(type, index), sizeof(c_struct::c_field)) << #c_struct "." #c_field; \
  } while (0)

TEST_F(KernelAbi, ValueDeviceAndDataTypeMatchTheCHeader) {
  EXPECT_EQ(size(types_.value), sizeof(AnvilValue));
  EXPECT_FIELD(types_.value, kValueKind, AnvilValue, kind);
  EXPECT_FIELD(types_.value, kValueReserved, AnvilValue, reserved);
  EXPECT_FIELD(types_.value, kValuePayload, AnvilValue, v_int64);
  EXPECT_EQ(offsetof(AnvilValue, v_handle), offsetof(AnvilValue, v_int64));  // one payload slot
  EXPECT_EQ(size(types_.device), sizeof(DLDevice));
  EXPECT_FIELD(types_.device, 0, DLDevice, device_type);
  EXPECT_FIELD(types_.device, 1, DLDevice, device_id);
  EXPECT_EQ(size(types_.dtype), sizeof(DLDataType));
  EXPECT_FIELD(types_.dtype, 0, DLDataType, code);
  EXPECT_FIELD(types_.dtype, 1, DLDataType, bits);
  EXPECT_FIELD(types_.dtype, 2, DLDataType, lanes);
}

TEST_F(KernelAbi, TensorMatchesDLPack) {
  EXPECT_EQ(size(types_.tensor), sizeof(DLTensor));
  EXPECT_FIELD(types_.tensor, kTensorData, DLTensor, data);
  EXPECT_FIELD(types_.tensor, kTensorDevice, DLTensor, device);
  EXPECT_FIELD(types_.tensor, kTensorNdim, DLTensor, ndim);
  EXPECT_FIELD(types_.tensor, kTensorDtype, DLTensor, dtype);
  EXPECT_FIELD(types_.tensor, kTensorShape, DLTensor, shape);
  EXPECT_FIELD(types_.tensor, kTensorStrides, DLTensor, strides);
  EXPECT_FIELD(types_.tensor, kTensorByteOffset, DLTensor, byte_offset);
}

TEST_F(KernelAbi, RuntimeApiTableAndParallelEnvMatchTheCHeader) {
  EXPECT_EQ(size(types_.runtime_api), sizeof(AnvilRuntimeApi));
  EXPECT_FIELD(types_.runtime_api, kApiAbiVersion, AnvilRuntimeApi, abi_version);
  EXPECT_FIELD(types_.runtime_api, kApiStructSize, AnvilRuntimeApi, struct_size);
  EXPECT_FIELD(types_.runtime_api, kApiErrorSet, AnvilRuntimeApi, error_set);
  EXPECT_FIELD(types_.runtime_api, kApiParallelLaunch, AnvilRuntimeApi, parallel_launch);
  EXPECT_FIELD(types_.runtime_api, kApiParallelBarrier, AnvilRuntimeApi, parallel_barrier);
  EXPECT_FIELD(types_.runtime_api, kApiWorkspaceAlloc, AnvilRuntimeApi, workspace_alloc);
  EXPECT_FIELD(types_.runtime_api, kApiWorkspaceFree, AnvilRuntimeApi, workspace_free);
  EXPECT_FIELD(types_.runtime_api, kApiFunctionCall, AnvilRuntimeApi, function_call);
  EXPECT_EQ(types_.runtime_api->getNumElements(), kApiFunctionCall + 1u);
  EXPECT_EQ(size(types_.parallel_env), sizeof(AnvilParallelEnv));
  EXPECT_FIELD(types_.parallel_env, kEnvSyncHandle, AnvilParallelEnv, sync_handle);
  EXPECT_FIELD(types_.parallel_env, kEnvNumTask, AnvilParallelEnv, num_task);
}

TEST_F(KernelAbi, FunctionTypesAreTheCDeclarations) {
  EXPECT_EQ(types_.kernel, fn_of<AnvilKernelFn>(ctx_));
  EXPECT_EQ(types_.parallel_lambda, fn_of<AnvilParallelLambda>(ctx_));
  EXPECT_EQ(types_.error_set, fn_of<decltype(AnvilRuntimeApi::error_set)>(ctx_));
  EXPECT_EQ(types_.parallel_launch, fn_of<decltype(AnvilRuntimeApi::parallel_launch)>(ctx_));
  EXPECT_EQ(types_.parallel_barrier, fn_of<decltype(AnvilRuntimeApi::parallel_barrier)>(ctx_));
  EXPECT_EQ(types_.workspace_alloc, fn_of<decltype(AnvilRuntimeApi::workspace_alloc)>(ctx_));
  EXPECT_EQ(types_.workspace_free, fn_of<decltype(AnvilRuntimeApi::workspace_free)>(ctx_));
  EXPECT_EQ(types_.function_call, fn_of<decltype(AnvilRuntimeApi::function_call)>(ctx_));
}

}  // namespace
}  // namespace anvil::codegen
