// The LLVM back end end to end with a hand-built kernel (IRBuilder) that follows the kernel ABI:
// JIT call, error reporting through the runtime API table, IR/assembly text, export to a shared
// library and load_module, a cross-compiled AArch64 object, and the JIT wrapper by itself.
#include "anvil/codegen/llvm/llvm_module.h"

#include <gtest/gtest.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/jit.h"
#include "anvil/codegen/llvm/kernel_abi.h"
#include "anvil/codegen/llvm/llvm_target.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

namespace anvil::codegen {
namespace {

namespace fs = std::filesystem;

// Loads the float* data pointer of the DLTensor in args[index] (honouring byte_offset).
llvm::Value* tensor_data(llvm::IRBuilder<>& b, const KernelAbiTypes& t, llvm::Value* args, unsigned index) {
  llvm::Value* cell = b.CreateConstInBoundsGEP1_32(t.value, args, index);
  llvm::Value* tensor = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(t.value, cell, kValuePayload), "tensor");
  llvm::Value* data = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(t.tensor, tensor, kTensorData));
  llvm::Value* offset = b.CreateLoad(b.getInt64Ty(), b.CreateStructGEP(t.tensor, tensor, kTensorByteOffset));
  return b.CreateInBoundsGEP(b.getInt8Ty(), data, offset, "data");
}

// __anvil_fn_vector_add(a, b, c): c[i] = a[i] + b[i] over a's first dimension; a TypeError
// through error_set unless called with three tensors.
void build_vector_add(llvm::Module& module) {
  llvm::LLVMContext& ctx = module.getContext();
  KernelAbiTypes t = kernel_abi_types(ctx);
  llvm::Function* fn = get_or_create_kernel(module, "vector_add");
  llvm::GlobalVariable* api_global = get_or_create_runtime_api_global(module);
  llvm::Value* args = fn->getArg(0);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* fail = llvm::BasicBlock::Create(ctx, "fail", fn);
  auto* body = llvm::BasicBlock::Create(ctx, "body", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  llvm::IRBuilder<> b(entry);
  llvm::Value* ok = b.CreateICmpEQ(fn->getArg(1), b.getInt32(3));
  for (unsigned i = 0; i < 3; ++i) {
    llvm::Value* cell = b.CreateConstInBoundsGEP1_32(t.value, args, i);
    llvm::Value* kind = b.CreateLoad(b.getInt32Ty(), b.CreateStructGEP(t.value, cell, kValueKind));
    // Only read the kinds that exist: select keeps the check in one block.
    llvm::Value* in_range = b.CreateICmpUGT(fn->getArg(1), b.getInt32(i));
    ok = b.CreateAnd(ok, b.CreateSelect(in_range, b.CreateICmpEQ(kind, b.getInt32(kAnvilTensor)), b.getFalse()));
  }
  b.CreateCondBr(ok, body, fail);

  b.SetInsertPoint(fail);
  llvm::Value* api = b.CreateLoad(b.getPtrTy(), api_global, "api");
  llvm::Value* error_set = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(t.runtime_api, api, kApiErrorSet));
  llvm::Value* message = b.CreateGlobalStringPtr("vector_add expects three tensors (a, b, c)");
  b.CreateCall(t.error_set, error_set, {b.getInt32(kAnvilErrorType), message});
  b.CreateRet(b.getInt32(-1));

  b.SetInsertPoint(body);
  llvm::Value* a = tensor_data(b, t, args, 0);
  llvm::Value* bb = tensor_data(b, t, args, 1);
  llvm::Value* c = tensor_data(b, t, args, 2);
  llvm::Value* a_cell = b.CreateConstInBoundsGEP1_32(t.value, args, 0);
  llvm::Value* a_tensor = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(t.value, a_cell, kValuePayload));
  llvm::Value* shape = b.CreateLoad(b.getPtrTy(), b.CreateStructGEP(t.tensor, a_tensor, kTensorShape));
  llvm::Value* n = b.CreateLoad(b.getInt64Ty(), shape, "n");
  b.CreateCondBr(b.CreateICmpSGT(n, b.getInt64(0)), loop, done);

  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, "i");
  i->addIncoming(b.getInt64(0), body);
  llvm::Value* x = b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), a, i));
  llvm::Value* y = b.CreateLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), bb, i));
  b.CreateStore(b.CreateFAdd(x, y), b.CreateInBoundsGEP(b.getFloatTy(), c, i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), "next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, n), loop, done);

  b.SetInsertPoint(done);
  b.CreateRet(b.getInt32(0));
}

Module vector_add_module(const std::string& target) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("vector_add", *context);
  build_vector_add(*module);
  return make_llvm_module(std::move(module), std::move(context), Target::parse(target));
}

Tensor random_tensor(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  Tensor t = Tensor::empty({n}, DataType::float32());
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data())[i] = dist(gen);
  return t;
}

void expect_sum(const Tensor& a, const Tensor& b, const Tensor& c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(static_cast<float*>(c.data())[i], static_cast<float*>(a.data())[i] + static_cast<float*>(b.data())[i])
        << "at " << i;
}

class LLVMModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    dir_ = fs::temp_directory_path() / ("anvil_llvm_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(LLVMModuleTest, JitCompiledKernelRunsThroughTheModule) {
  Module m = vector_add_module("llvm");
  EXPECT_EQ(m.kind(), "llvm");
  EXPECT_EQ(m.node()->list_functions(), std::vector<std::string>{"vector_add"});
  EXPECT_FALSE(m.find_function("nothing").has_value());
  for (int64_t n : {1, 7, 1000, 4099}) {  // odd sizes exercise the vector loop's remainder
    Tensor a = random_tensor(n, 1), b = random_tensor(n, 2), c = Tensor::empty({n}, DataType::float32());
    m["vector_add"](a, b, c);
    expect_sum(a, b, c, n);
  }
}

TEST_F(LLVMModuleTest, KernelErrorsComeBackThroughTheRuntimeApiTable) {
  Module m = vector_add_module("llvm");
  Function f = m["vector_add"];
  try {
    f(1, 2);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_STREQ(e.what(), "kernel 'vector_add' failed: vector_add expects three tensors (a, b, c)");
  }
}

TEST_F(LLVMModuleTest, FunctionKeepsTheJitAlive) {
  Function f;
  {
    Module m = vector_add_module("llvm");
    f = m["vector_add"];
  }
  Tensor a = random_tensor(64, 3), b = random_tensor(64, 4), c = Tensor::empty({64}, DataType::float32());
  f(a, b, c);
  expect_sum(a, b, c, 64);
}

TEST_F(LLVMModuleTest, SourceIsOptimisedIRAndAssembly) {
  Module m = vector_add_module("llvm");
  std::string ll = llvm_module_source(m, "ll");
  EXPECT_NE(ll.find("define i32 @__anvil_fn_vector_add"), std::string::npos);
  EXPECT_NE(ll.find("target triple = \"" + host_cpu().triple + "\""), std::string::npos);
  EXPECT_NE(ll.find("fadd <"), std::string::npos) << "the loop vectoriser should have run:\n" << ll;
  std::string assembly = llvm_module_source(m, "asm");
  EXPECT_NE(assembly.find("__anvil_fn_vector_add:"), std::string::npos);
  EXPECT_EQ(llvm_module_source(m, "s"), assembly);
  EXPECT_THROW(llvm_module_source(m, "ptx"), Error);
  EXPECT_EQ(llvm_module_target(m), Target::parse("llvm"));
}

TEST_F(LLVMModuleTest, ExportedLibraryLoadsAndRuns) {
  Module m = vector_add_module("llvm -opt-level=2");
  std::string path = (dir_ / "vector_add.so").string();
  pipeline::export_library(m, path);
  Module lib = Module::load_from_file(path);
  EXPECT_EQ(lib.kind(), "library");
  EXPECT_EQ(lib.node()->list_functions(), std::vector<std::string>{"vector_add"});
  Tensor a = random_tensor(1001, 5), b = random_tensor(1001, 6), c = Tensor::empty({1001}, DataType::float32());
  lib["vector_add"](a, b, c);
  expect_sum(a, b, c, 1001);
  EXPECT_THROW(lib["vector_add"](a), Error);  // the library's copy of the table is bound too
}

TEST_F(LLVMModuleTest, AArch64ObjectIsAnAArch64Relocatable) {
  Module m = vector_add_module("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72");
  const std::string& object = llvm_module_object(m);
  ASSERT_GT(object.size(), 64u);
  EXPECT_EQ(object.substr(0, 4), "\x7f" "ELF");
  EXPECT_EQ(object[4], 2);  // ELFCLASS64
  EXPECT_EQ(object[5], 1);  // little-endian
  uint16_t type = 0, machine = 0;
  std::memcpy(&type, object.data() + 16, 2);
  std::memcpy(&machine, object.data() + 18, 2);
  EXPECT_EQ(type, 1);         // ET_REL
  EXPECT_EQ(machine, 183);    // EM_AARCH64
  EXPECT_NE(llvm_module_source(m, "asm").find("ldr"), std::string::npos);
  // It cannot run here: the JIT refuses instead of crashing.
  try {
    m["vector_add"];
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented);
    EXPECT_NE(std::string(e.what()).find("aarch64"), std::string::npos) << e.what();
  }
  // Cross-check with LLVM's objdump when it is installed.
  std::string file = (dir_ / "vector_add_aarch64.o").string();
  std::ofstream(file, std::ios::binary) << object;
  std::string command = "llvm-objdump-16 -h '" + file + "' 2>/dev/null";
  if (FILE* pipe = popen(command.c_str(), "r")) {
    std::string out;
    char buffer[512];
    while (size_t n = fread(buffer, 1, sizeof buffer, pipe)) out.append(buffer, n);
    if (pclose(pipe) == 0) {
      EXPECT_NE(out.find("elf64-littleaarch64"), std::string::npos) << out;
    }
  }
}

TEST_F(LLVMModuleTest, InvalidIRIsAnInternalError) {
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("broken", *context);
  llvm::Function* fn = get_or_create_kernel(*module, "broken");
  llvm::BasicBlock::Create(*context, "entry", fn);  // no terminator
  try {
    make_llvm_module(std::move(module), std::move(context), Target::parse("llvm"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("not valid IR"), std::string::npos) << e.what();
  }
}

TEST_F(LLVMModuleTest, JitResolvesProcessAndRuntimeSymbols) {
  // float f(float x) { return sqrtf(x) + (AnvilGetRuntimeApi() != 0); }, JIT'd from IR directly.
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("symbols", *context);
  llvm::IRBuilder<> b(*context);
  auto* f = llvm::Function::Create(llvm::FunctionType::get(b.getFloatTy(), {b.getFloatTy()}, false),
                                   llvm::GlobalValue::ExternalLinkage, "f", *module);
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", f));
  llvm::FunctionCallee sqrtf = module->getOrInsertFunction("sqrtf", b.getFloatTy(), b.getFloatTy());
  llvm::FunctionCallee get_api = module->getOrInsertFunction("AnvilGetRuntimeApi", b.getPtrTy());
  llvm::Value* root = b.CreateCall(sqrtf, {f->getArg(0)});
  llvm::Value* has_api = b.CreateUIToFP(b.CreateIsNotNull(b.CreateCall(get_api, {})), b.getFloatTy());
  b.CreateRet(b.CreateFAdd(root, has_api));
  LLVMJit jit(resolve_llvm_target(Target::parse("llvm")));
  jit.add_module(std::move(module), std::move(context));
  auto* fn = reinterpret_cast<float (*)(float)>(jit.lookup("f"));
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn(16.0f), 5.0f);
  EXPECT_EQ(jit.lookup("no_such_symbol"), nullptr);
  jit.bind_runtime_api();  // no __anvil_runtime_api in this code: nothing to do, no error
}

TEST_F(LLVMModuleTest, JitRefusesCodeTheHostCannotRun) {
  EXPECT_THROW(LLVMJit(resolve_llvm_target(Target::parse("llvm -mtriple=aarch64-linux-gnu"))), Error);
}

}  // namespace
}  // namespace anvil::codegen
