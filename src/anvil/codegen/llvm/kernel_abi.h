// The kernel ABI (runtime/c_abi.h, docs/abi.md) in LLVM terms, for code generators that emit
// host functions: the struct types of AnvilValue, DLTensor and AnvilRuntimeApi, the kernel
// function type, the `__anvil_runtime_api` global and calls through it.
//
// Layouts follow the C header field by field (pointers are the target's pointer width), so the
// same IR is right for any triple. Opaque pointers (LLVM 16): GEPs name these struct types.
#pragma once

#include <string>
#include <string_view>

namespace llvm {
class CallInst;
class Function;
class FunctionType;
class GlobalVariable;
class LLVMContext;
class Module;
class StructType;
class Value;
}  // namespace llvm

namespace anvil::codegen {

// Field numbers of the structs below, for CreateStructGEP.
enum AnvilValueField : unsigned { kValueKind = 0, kValueReserved = 1, kValuePayload = 2 /* i64 / double / ptr */ };
enum DLTensorField : unsigned {
  kTensorData = 0,
  kTensorDevice = 1,
  kTensorNdim = 2,
  kTensorDtype = 3,
  kTensorShape = 4,
  kTensorStrides = 5,
  kTensorByteOffset = 6
};
enum RuntimeApiField : unsigned {
  kApiAbiVersion = 0,
  kApiStructSize = 1,
  kApiErrorSet = 2,         // void (i32 kind, ptr message)
  kApiParallelLaunch = 3,   // i32 (ptr lambda, ptr closure, i32 num_task)
  kApiParallelBarrier = 4,  // i32 (i32 task_id, ptr env)
  kApiWorkspaceAlloc = 5,   // ptr (i32 device_type, i32 device_id, i64 nbytes)
  kApiWorkspaceFree = 6,    // i32 (i32 device_type, i32 device_id, ptr)
  kApiFunctionCall = 7      // i32 (ptr handle, ptr args, i32 n, ptr ret)
};
enum ParallelEnvField : unsigned { kEnvSyncHandle = 0, kEnvNumTask = 1 };

struct KernelAbiTypes {
  llvm::StructType* value;         // AnvilValue {i32 kind, i32 reserved, i64 payload}
  llvm::StructType* device;        // DLDevice {i32, i32}
  llvm::StructType* dtype;         // DLDataType {i8 code, i8 bits, i16 lanes}
  llvm::StructType* tensor;        // DLTensor {ptr, DLDevice, i32, DLDataType, ptr, ptr, i64}
  llvm::StructType* runtime_api;   // AnvilRuntimeApi {i32, i32, ptr x 6}
  llvm::StructType* parallel_env;  // AnvilParallelEnv {ptr, i32}
  llvm::FunctionType* kernel;           // i32 (ptr args, i32 num_args, ptr ret)
  llvm::FunctionType* parallel_lambda;  // i32 (i32 task_id, ptr env, ptr closure)
  llvm::FunctionType* error_set;
  llvm::FunctionType* parallel_launch;
  llvm::FunctionType* parallel_barrier;
  llvm::FunctionType* workspace_alloc;
  llvm::FunctionType* workspace_free;
  llvm::FunctionType* function_call;
};
// Named struct types are created once per context ("anvil.Value", "DLTensor", ...).
KernelAbiTypes kernel_abi_types(llvm::LLVMContext& context);

// "__anvil_fn_<name>".
std::string kernel_symbol_name(std::string_view name);
// Declares (or returns) the exported kernel `__anvil_fn_<name>` with the kernel type; its three
// arguments are named args, num_args, ret. The caller adds the body.
llvm::Function* get_or_create_kernel(llvm::Module& module, std::string_view name);
// The module's `__anvil_runtime_api` pointer global: defined (null, weak, default visibility,
// so several modules linked into one library share one), filled in by load_module / the JIT.
llvm::GlobalVariable* get_or_create_runtime_api_global(llvm::Module& module);

}  // namespace anvil::codegen
