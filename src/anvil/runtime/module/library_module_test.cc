// Loading a hand-written kernel library and calling its kernels through the ABI.
#include "anvil/runtime/module/library_module.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "anvil/runtime/register.h"
#include "anvil/runtime/test_util.h"

namespace anvil {
namespace {

class LibraryModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    lib_ = Module::load_from_file(ANVIL_TEST_KERNELS);
  }
  Module lib_;
};

TEST_F(LibraryModuleTest, LoadsAndListsFunctions) {
  EXPECT_EQ(lib_.kind(), "library");
  auto names = lib_.node()->list_functions();
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(names[0], "add_one");
}

TEST_F(LibraryModuleTest, KernelsComputeOnTensors) {
  Tensor x = testing::random_float_tensor({7, 9});
  Tensor y = Tensor::empty({7, 9}, DataType::float32());
  lib_["add_one"](x, y);
  auto* xp = static_cast<float*>(x.data());
  auto* yp = static_cast<float*>(y.data());
  for (int i = 0; i < 63; ++i) ASSERT_FLOAT_EQ(yp[i], xp[i] + 1.0f);

  Tensor a = testing::random_float_tensor({1000});
  Tensor b = testing::random_float_tensor({1000});
  Tensor c = Tensor::empty({1000}, DataType::float32());
  lib_["vector_add"](a, b, c);
  for (int i = 0; i < 1000; ++i)
    ASSERT_FLOAT_EQ(static_cast<float*>(c.data())[i],
                    static_cast<float*>(a.data())[i] + static_cast<float*>(b.data())[i]);
}

TEST_F(LibraryModuleTest, KernelUsesTheThreadPoolThroughTheApiTable) {
  Tensor x = testing::random_float_tensor({10007});
  Tensor y = Tensor::empty({10007}, DataType::float32());
  lib_["scale_parallel"](x, y, 2.5);
  for (int i = 0; i < 10007; ++i)
    ASSERT_FLOAT_EQ(static_cast<float*>(y.data())[i], static_cast<float*>(x.data())[i] * 2.5f) << i;
}

TEST_F(LibraryModuleTest, ScalarReturnsAndViews) {
  EXPECT_EQ(lib_["sum_ints"](40, 2).as_int(), 42);
  Tensor x = testing::random_float_tensor({4, 4});
  std::vector<int64_t> row{4};
  double expected = 0;
  for (int j = 0; j < 4; ++j) expected += static_cast<float*>(x.data())[8 + j];
  // A view with a byte offset: the kernel must honour DLTensor.byte_offset.
  EXPECT_NEAR(lib_["describe"](x.view(row, std::nullopt, 32)).as_float(), expected, 1e-6);
}

TEST_F(LibraryModuleTest, KernelErrorsBecomeTypedExceptions) {
  try {
    lib_["fail_always"]();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("kernel 'fail_always' failed: fail_always: deliberate failure"),
              std::string::npos)
        << e.what();
  }
  Tensor x = Tensor::empty({3}, DataType::int32());
  try {
    lib_["add_one"](x, x);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("float32"), std::string::npos);
  }
  try {
    lib_["add_one"](x);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expects 2 arguments"), std::string::npos);
  }
  // Arrays cannot cross the C ABI: rejected before the kernel runs.
  EXPECT_THROW(lib_["sum_ints"](Value(std::vector<Value>{}), 1), Error);
}

TEST_F(LibraryModuleTest, MissingFunctionListsWhatExists) {
  EXPECT_FALSE(lib_.find_function("conv2d").has_value());
  try {
    lib_["conv2d"];
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("add_one"), std::string::npos) << e.what();
  }
}

TEST_F(LibraryModuleTest, FunctionsKeepTheLibraryAlive) {
  Function f = lib_["sum_ints"];
  lib_ = Module();
  EXPECT_EQ(f(1, 2).as_int(), 3);
}

TEST(LibraryModuleLoad, BadFilesGiveIOErrors) {
  auto expect_io = [](const std::string& path, const std::string& fragment) {
    try {
      Module::load_from_file(path);
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kIO) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_io("/nonexistent/kernels.so", "cannot open");
  expect_io("/tmp", "not a regular file");
  auto dir = std::filesystem::temp_directory_path();
  std::ofstream(dir / "anvil_not_a_library.so") << "this is text, not ELF";
  expect_io((dir / "anvil_not_a_library.so").string(), "not a loadable shared library");
  // A truncated copy of a real library.
  std::ifstream in(ANVIL_TEST_KERNELS, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir / "anvil_truncated.so", std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  expect_io((dir / "anvil_truncated.so").string(), "not a loadable shared library");
  std::filesystem::remove(dir / "anvil_not_a_library.so");
  std::filesystem::remove(dir / "anvil_truncated.so");
}

// A name without a slash is the file in the working directory, never a search of the library
// path: right after exporting "k.so", load_module("k.so") loads it, and a local file named like a
// system library is what loads, not the system one.
TEST(LibraryModuleLoad, NameWithoutSlashIsTheFileInTheWorkingDirectory) {
  register_runtime_functions();
  auto cwd = std::filesystem::current_path();
  auto dir = std::filesystem::temp_directory_path() / ("anvil_bare_name_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"anvil_local_kernels.so", "libm.so.6"})
    std::filesystem::copy_file(ANVIL_TEST_KERNELS, dir / name, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::current_path(dir);
  std::vector<std::string> failures;
  for (const char* name : {"anvil_local_kernels.so", "libm.so.6"}) {
    try {
      Module m = Module::load_from_file(name);
      auto names = m.node()->list_functions();
      if (names.empty() || names[0] != "add_one") failures.push_back(std::string(name) + ": loaded another library");
      else if (m["sum_ints"](40, 2).as_int() != 42) failures.push_back(std::string(name) + ": wrong result");
    } catch (const Error& e) {
      failures.push_back(std::string(name) + ": " + e.what());
    }
  }
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
  for (const std::string& f : failures) ADD_FAILURE() << f;
}

TEST(LibraryModuleLoad, NewerAbiIsRefused) {
  try {
    Module::load_from_file(ANVIL_TEST_KERNELS_FUTURE_ABI);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("ABI version 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil
