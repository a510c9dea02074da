// export_library: C source + params tree -> .so -> load_module -> call, weights bit-exact and
// aligned after the .incbin blob, and corrupt or truncated blobs in a real library.
#include "anvil/pipeline/export_library.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>

#include "anvil/codegen/c/c_source_module.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/module/library_module.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSource = R"(
#include "anvil/runtime/c_abi.h"
const AnvilRuntimeApi* __anvil_runtime_api = 0;
int32_t __anvil_fn_square(const AnvilValue* args, int32_t n, AnvilValue* ret) {
  (void)ret;
  if (n != 2 || args[0].kind != kAnvilTensor || args[1].kind != kAnvilTensor) {
    __anvil_runtime_api->error_set(kAnvilErrorType, "square expects (x, y) tensors");
    return -1;
  }
  const DLTensor* x = args[0].v_tensor;
  int64_t count = 1;
  for (int i = 0; i < x->ndim; ++i) count *= x->shape[i];
  const float* in = (const float*)((const char*)x->data + x->byte_offset);
  float* out = (float*)((char*)args[1].v_tensor->data + args[1].v_tensor->byte_offset);
  for (int64_t i = 0; i < count; ++i) out[i] = in[i] * in[i];
  return 0;
}
)";

class ExportLibraryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    dir_ = fs::temp_directory_path() / ("anvil_export_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

Tensor random_tensor(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  Tensor t = Tensor::empty({n}, DataType::float32());
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data())[i] = dist(gen);
  return t;
}

TEST_F(ExportLibraryTest, HostCodeAloneLoadsAsALibrary) {
  Module c = codegen::make_c_source_module(kSource, {"square"});
  std::string path = (dir_ / "square.so").string();
  pipeline::export_library(c, path);
  Module lib = Module::load_from_file(path);
  EXPECT_EQ(lib.kind(), "library");
  EXPECT_EQ(lib.node()->list_functions(), std::vector<std::string>{"square"});
  Tensor x = random_tensor(257, 1), y = Tensor::empty({257}, DataType::float32());
  lib["square"](x, y);
  for (int i = 0; i < 257; ++i) {
    float v = static_cast<float*>(x.data())[i];
    ASSERT_EQ(static_cast<float*>(y.data())[i], v * v);
  }
}

TEST_F(ExportLibraryTest, BlobCarriesParamsAndTheTreeComesBack) {
  Tensor w = random_tensor(64, 2);
  Module root = make_params_module({{"weight", w}});
  root.import_module(codegen::make_c_source_module(kSource, {"square"}));
  std::string path = (dir_ / "model.so").string();
  pipeline::export_library(root, path);
  Module loaded = Module::load_from_file(path);
  EXPECT_EQ(loaded.kind(), "params");
  ASSERT_EQ(loaded.imports().size(), 1u);
  EXPECT_EQ(loaded.imports()[0].kind(), "library");
  Tensor w2 = loaded["get_param"]("weight").as_tensor();
  EXPECT_EQ(std::memcmp(w2.data(), w.data(), w.nbytes()), 0);
  Tensor y = Tensor::empty({64}, DataType::float32());
  loaded["square"](w2, y);  // found in the imported library
  EXPECT_EQ(static_cast<float*>(y.data())[5], static_cast<float*>(w.data())[5] * static_cast<float*>(w.data())[5]);
}

// Real random weights of odd sizes (several MB) survive export and load byte for byte; the blob
// symbol lies 64-byte aligned in the loaded library and every weight's data pointer is 64-byte
// aligned (the loader copies tensors into runtime allocations, kAllocAlignment).
TEST_F(ExportLibraryTest, ManyWeightsComeBackBitExactAndAligned) {
  std::map<std::string, Tensor> weights;
  const int64_t sizes[] = {1, 3, 17, 1000, 12345, 1 << 20};
  for (unsigned i = 0; i < std::size(sizes); ++i) weights["w" + std::to_string(i)] = random_tensor(sizes[i], 100 + i);
  Module root = make_params_module(weights);
  root.import_module(codegen::make_c_source_module(kSource, {"square"}));
  std::string path = (dir_ / "weights.so").string();
  pipeline::export_library(root, path);
  Module loaded = Module::load_from_file(path);
  ASSERT_EQ(loaded.kind(), "params");
  EXPECT_EQ(loaded["num_params"]().as_int(), static_cast<int64_t>(weights.size()));
  for (const auto& [name, w] : weights) {
    Tensor got = loaded["get_param"](name).as_tensor();
    ASSERT_EQ(got.nbytes(), w.nbytes()) << name;
    EXPECT_EQ(std::memcmp(got.data(), w.data(), w.nbytes()), 0) << name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got.data()) % 64, 0u) << name;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto* blob = static_cast<const char*>(dlsym(handle, kBlobSymbol));
  auto* blob_size = static_cast<const uint64_t*>(dlsym(handle, kBlobSizeSymbol));
  ASSERT_NE(blob, nullptr);
  ASSERT_NE(blob_size, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(blob) % 64, 0u);
  std::string packed = pack_module_tree(root, codegen::is_host_code_module);
  ASSERT_EQ(*blob_size, packed.size());
  EXPECT_EQ(std::memcmp(blob, packed.data(), packed.size()), 0);
  dlclose(handle);
}

// The temporary directory's path goes into the assembler source quoted: quotes, backslashes and
// spaces in it do not break the export.
TEST_F(ExportLibraryTest, TempDirWithQuotesInItsPath) {
  fs::path odd = dir_ / "a \"q\" \\b";
  fs::create_directories(odd);
  const char* old = std::getenv("TMPDIR");
  std::string saved = old ? old : "";
  ::setenv("TMPDIR", odd.c_str(), 1);
  Module root = make_params_module({{"weight", random_tensor(33, 7)}});
  root.import_module(codegen::make_c_source_module(kSource, {"square"}));
  std::string path = (dir_ / "odd.so").string();
  try {
    pipeline::export_library(root, path);
  } catch (...) {
    old ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
    throw;
  }
  old ? ::setenv("TMPDIR", saved.c_str(), 1) : ::unsetenv("TMPDIR");
  Module loaded = Module::load_from_file(path);
  Tensor w = loaded["get_param"]("weight").as_tensor();
  EXPECT_EQ(std::memcmp(w.data(), random_tensor(33, 7).data(), w.nbytes()), 0);
  EXPECT_THROW(pipeline::blob_assembly_source("a\nb", 1), Error);
}

// Builds a library whose blob symbols hold `blob` the way export_library writes them.
std::string library_with_blob(const fs::path& dir, const std::string& name, const std::string& blob) {
  fs::path bin = dir / (name + ".bin"), s = dir / (name + ".s"), c = dir / (name + ".c");
  std::ofstream(bin, std::ios::binary) << blob;
  std::ofstream(s) << pipeline::blob_assembly_source(bin.string(), blob.size());
  // A 3-byte read-only object linked first: a blob 32-byte aligned at most (what gcc gives a C
  // array, the old export path) would land at +32 after it; .balign 64 puts it at +64.
  std::ofstream(c) << "#include <stdint.h>\nconst uint32_t __anvil_abi_version = 1;\nconst char anvil_test_pad[3] = \"ab\";\n";
  std::string so = (dir / (name + ".so")).string();
  EXPECT_EQ(std::system(("cc -shared -fPIC -o " + so + " " + c.string() + " " + s.string()).c_str()), 0);
  return so;
}

void expect_load_error(const std::string& so, const std::string& words) {
  try {
    Module::load_from_file(so);
    FAIL() << "loading " << so << " did not throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fs::path(so).filename().string()), std::string::npos) << e.what();
  }
}

TEST_F(ExportLibraryTest, CorruptBlobInALibraryIsAClearError) {
  Module root = make_params_module({{"weight", random_tensor(16, 3)}});
  root.import_module(codegen::make_c_source_module(kSource, {"square"}));
  std::string blob = pack_module_tree(root, codegen::is_host_code_module);
  std::string intact = library_with_blob(dir_, "intact", blob);
  EXPECT_EQ(Module::load_from_file(intact).kind(), "params");  // the helper itself builds good libraries
  void* handle = dlopen(intact.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dlsym(handle, kBlobSymbol)) % 64, 0u);
  dlclose(handle);
  std::string corrupt = blob;
  corrupt[corrupt.size() - 20] ^= 0x5A;  // inside the payload: the checksum catches it
  expect_load_error(library_with_blob(dir_, "corrupt", corrupt), "checksum");
  // A blob cut short: the header's payload size no longer matches what follows.
  expect_load_error(library_with_blob(dir_, "truncated", blob.substr(0, blob.size() - 9)), "truncated or corrupt");
}

TEST_F(ExportLibraryTest, CompilerErrorsAreReported) {
  Module bad = codegen::make_c_source_module("this is not C;", {"nothing"});
  try {
    pipeline::export_library(bad, (dir_ / "bad.so").string());
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kRuntime);
    EXPECT_NE(std::string(e.what()).find("failed"), std::string::npos);
  }
  EXPECT_THROW(pipeline::export_library(make_params_module({}), (dir_ / "x.so").string()), Error);
}

TEST_F(ExportLibraryTest, SourceModuleIsNotRunnableBeforeExport) {
  Module c = codegen::make_c_source_module(kSource, {"square"});
  EXPECT_THROW(c["square"], Error);
}

// A VM executable travels in the library's blob next to the kernels it calls: loading the
// library gives the executable back, and a VM runs it with the library's kernels.
TEST_F(ExportLibraryTest, VmExecutableAndKernelsShipInOneLibrary) {
  vm::ExecBuilder b;
  b.begin_function("main", {"x", "y"});
  b.emit_call("square", {vm::Arg::reg(0), vm::Arg::reg(1)});
  b.emit_call("square", {vm::Arg::reg(1), vm::Arg::reg(1)});  // y = x^4
  b.emit_ret(1);
  b.end_function();
  vm::Executable exe = b.get();
  exe.as_module().import_module(codegen::make_c_source_module(kSource, {"square"}));
  std::string path = (dir_ / "vm_model.so").string();
  pipeline::export_library(exe.as_module(), path);

  Module loaded = Module::load_from_file(path);
  EXPECT_EQ(loaded.kind(), "vm.executable");
  vm::VirtualMachine machine = vm::VirtualMachine::create(loaded, {Device::cpu()});
  Tensor x = random_tensor(100, 4), y = Tensor::empty({100}, DataType::float32());
  machine["main"](x, y);
  for (int i = 0; i < 100; ++i) {
    double v = static_cast<float*>(x.data())[i];
    ASSERT_NEAR(static_cast<float*>(y.data())[i], v * v * v * v, 1e-5 * (1 + v * v * v * v));
  }
}

}  // namespace
}  // namespace anvil
