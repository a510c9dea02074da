// The "vulkan" module running hand-assembled SPIR-V on the machine's device: push-constant and
// uniform scalar blocks, batched dispatches, argument checks, save/load, and (in child
// processes, so that exit-time shutdown is covered) the descriptor-set path, the shader save
// path and the validation layers.
#include "anvil/runtime/device/vulkan/vulkan_module.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "anvil/runtime/device/vulkan/vulkan_device.h"
#include "anvil/runtime/device/vulkan/vulkan_env.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/test_util.h"

namespace anvil::vulkan {
namespace {

using testing::axpy_kernel;

Tensor random_vector(int64_t n) {
  std::vector<int64_t> shape{n};
  return anvil::testing::random_f32(shape, anvil::testing::rng());
}

// Runs fn = axpy on fresh random inputs of length n and checks c against a C++ loop.
void check_axpy(const Function& fn, int64_t n, float s) {
  Tensor a = random_vector(n), b = random_vector(n);
  Tensor da = a.copy_to(Device::vulkan(0)), db = b.copy_to(Device::vulkan(0));
  Tensor dc = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
  fn(da, db, dc, s);
  Tensor c = dc.copy_to(Device::cpu());
  auto* pa = static_cast<const float*>(a.data());
  auto* pb = static_cast<const float*>(b.data());
  auto* pc = static_cast<const float*>(c.data());
  for (int64_t i = 0; i < n; ++i) ASSERT_FLOAT_EQ(pc[i], pa[i] * s + pb[i]) << "n=" << n << " i=" << i;
}

// The message of the error fn throws. Kinds as the CPU kernels' checks: TypeError for the
// argument count and the kind of a value (tensor / scalar), ValueError for the rest.
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    std::string msg = e.what();
    bool type_like = msg.find(" arguments but got ") != std::string::npos || msg.find(" must be a ") != std::string::npos;
    EXPECT_EQ(e.kind(), type_like ? ErrorKind::kType : ErrorKind::kValue) << msg;
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(VulkanModule, RunsAxpyWithPushConstants) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Module m = make_vulkan_module({axpy_kernel(false)});
  Function fn = m.get_function("axpy");
  for (int64_t n : {1, 63, 64, 65, 1000, 100003}) check_axpy(fn, n, 2.5f);
  check_axpy(fn, 777, -0.25f);
}

TEST(VulkanModule, RunsAxpyWithAUniformBlock) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Module m = make_vulkan_module({axpy_kernel(true)});
  Function fn = m.get_function("axpy");
  for (int64_t n : {1, 65, 4099}) check_axpy(fn, n, 1.5f);
}

// Many dispatches batched before one sync, each with its own scalars: every one must see its
// own block (push constants and per-dispatch uniform slices alike).
TEST(VulkanModule, BatchedDispatchesEachSeeTheirOwnScalars) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  for (bool uniform : {false, true}) {
    Module m = make_vulkan_module({axpy_kernel(uniform)});
    Function fn = m.get_function("axpy");
    const int64_t n = 300;
    Tensor a = random_vector(n), b = random_vector(n);
    Tensor da = a.copy_to(Device::vulkan(0)), db = b.copy_to(Device::vulkan(0));
    std::vector<Tensor> outs;
    for (int k = 0; k < 40; ++k) {
      outs.push_back(Tensor::empty({n}, DataType::float32(), Device::vulkan(0)));
      fn(da, db, outs.back(), static_cast<double>(k));
    }
    // Chained dispatches: the second reads what the first wrote (needs the barrier).
    Tensor chained = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
    fn(outs[3], db, chained, 2.0);
    for (int k = 0; k < 40; ++k) {
      Tensor c = outs[k].copy_to(Device::cpu());
      for (int64_t i = 0; i < n; ++i)
        ASSERT_FLOAT_EQ(static_cast<float*>(c.data())[i],
                        static_cast<float*>(a.data())[i] * k + static_cast<float*>(b.data())[i])
            << "uniform=" << uniform << " k=" << k;
    }
    Tensor c = chained.copy_to(Device::cpu());
    for (int64_t i = 0; i < n; ++i) {
      float first = static_cast<float*>(a.data())[i] * 3 + static_cast<float*>(b.data())[i];
      ASSERT_FLOAT_EQ(static_cast<float*>(c.data())[i], first * 2 + static_cast<float*>(b.data())[i]);
    }
  }
}

TEST(VulkanModule, ChecksArgumentsNamingKernelAndArgument) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Module m = make_vulkan_module({axpy_kernel(false)});
  Function fn = m.get_function("axpy");
  Device v = Device::vulkan(0);
  Tensor a = Tensor::empty({10}, DataType::float32(), v), b = Tensor::empty({10}, DataType::float32(), v);
  Tensor c = Tensor::empty({10}, DataType::float32(), v);
  auto expect = [](const std::function<void()>& call, std::initializer_list<const char*> needles) {
    std::string msg = error_of(call);
    for (const char* needle : needles) EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  Tensor wrong_dtype = Tensor::empty({10}, DataType::int32(), v);
  expect([&] { fn(a, wrong_dtype, c, 1.0); }, {"'axpy'", "'b'", "dtype int32"});
  Tensor wrong_rank = Tensor::empty({10, 1}, DataType::float32(), v);
  expect([&] { fn(a, b, wrong_rank, 1.0); }, {"'axpy'", "'c'", "rank"});
  Tensor shorter = Tensor::empty({9}, DataType::float32(), v);
  expect([&] { fn(a, shorter, c, 1.0); }, {"'axpy'", "'b'", "dim 0 is 9", "'a'"});
  Tensor on_cpu = Tensor::empty({10}, DataType::float32());
  expect([&] { fn(on_cpu, b, c, 1.0); }, {"'axpy'", "'a'", "cpu"});
  expect([&] { fn(a, b, c); }, {"'axpy'", "4 arguments"});
  expect([&] { fn(a, b, 1.0, c); }, {"'c'", "tensor"});
  expect([&] { fn(a, b, c, a); }, {"'s'", "scalar"});
  // A view at a byte offset that the device cannot bind.
  uint64_t align = static_cast<uint64_t>(query_device_limits(0)->min_storage_buffer_offset_alignment);
  if (align > 4) {
    Tensor big = Tensor::empty({64}, DataType::float32(), v);
    std::vector<int64_t> shape{10};
    Tensor view = big.view(shape, std::nullopt, 4);
    expect([&] { fn(view, b, c, 1.0); }, {"'a'", "byte_offset 4"});
  }
}

// n as a scalar argument that is also the tensors' symbolic length: the call must agree.
TEST(VulkanModule, ScalarArgumentSharedWithATensorDimMustAgree) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  KernelInfo k = axpy_kernel(false, "axpy_n");
  KernelArg n;
  n.kind = KernelArg::kScalar;
  n.name = "n";
  n.dtype = DLDataType{kDLInt, 32, 1};
  n.slot = 1;
  k.args.push_back(n);
  k.slots[1] = ScalarSlot{ScalarSlot::kScalarArg, 4, 0, DLDataType{kDLInt, 32, 1}, 4};
  Function fn = make_vulkan_module({k}).get_function("axpy_n");
  const int64_t len = 130;
  Tensor a = random_vector(len), b = random_vector(len);
  Tensor da = a.copy_to(Device::vulkan(0)), db = b.copy_to(Device::vulkan(0));
  Tensor dc = Tensor::empty({len}, DataType::float32(), Device::vulkan(0));
  fn(da, db, dc, 2.0, len);
  Tensor c = dc.copy_to(Device::cpu());
  for (int64_t i = 0; i < len; ++i)
    ASSERT_FLOAT_EQ(static_cast<float*>(c.data())[i],
                    static_cast<float*>(a.data())[i] * 2 + static_cast<float*>(b.data())[i]);
  std::string msg = error_of([&] { fn(da, db, dc, 2.0, len - 1); });
  EXPECT_NE(msg.find("('n') = 129"), std::string::npos) << msg;
  msg = error_of([&] { fn(da, db, dc, 2.0, 1.5); });
  EXPECT_NE(msg.find("'n'"), std::string::npos) << msg;
}

TEST(VulkanModule, TensorsAtAlignedByteOffsetsAreBoundThere) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Module m = make_vulkan_module({axpy_kernel(false)});
  Function fn = m.get_function("axpy");
  uint64_t align = static_cast<uint64_t>(query_device_limits(0)->min_storage_buffer_offset_alignment);
  const int64_t n = 100, skip = static_cast<int64_t>(align / 4 > 0 ? align / 4 : 1);
  Tensor host = random_vector(n + skip);
  Tensor dev = host.copy_to(Device::vulkan(0));
  std::vector<int64_t> shape{n};
  Tensor a = dev.view(shape, std::nullopt, static_cast<uint64_t>(skip) * 4);
  Tensor zeros = Tensor::empty({n}, DataType::float32());
  std::memset(zeros.data(), 0, zeros.nbytes());
  Tensor b = zeros.copy_to(Device::vulkan(0));
  Tensor c = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
  fn(a, b, c, 1.0);
  Tensor out = c.copy_to(Device::cpu());
  for (int64_t i = 0; i < n; ++i)
    ASSERT_FLOAT_EQ(static_cast<float*>(out.data())[i], static_cast<float*>(host.data())[i + skip]);
}

TEST(VulkanModule, RunsAgainAfterSaveAndLoad) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  register_runtime_functions();
  std::string bytes = make_vulkan_module({axpy_kernel(false), axpy_kernel(true, "axpy_u")}).node()->save_to_bytes();
  Module back = Module::load_from_bytes("vulkan", bytes);
  check_axpy(back.get_function("axpy"), 513, 3.0f);
  check_axpy(back.get_function("axpy_u"), 513, -3.0f);
}

// Several host threads launching and copying at once on the one device (its mutex serialises
// recording and submission).
TEST(VulkanModule, ThreadsShareTheDeviceSafely) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  Module m = make_vulkan_module({axpy_kernel(false), axpy_kernel(true, "axpy_u")});
  std::vector<Tensor> inputs;
  for (int t = 0; t < 8; ++t) inputs.push_back(random_vector(500));  // rng is not thread-safe: draw here
  std::vector<std::string> failures(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      try {
        Function fn = m.get_function(t % 2 ? "axpy_u" : "axpy");
        Tensor a = inputs[2 * t], b = inputs[2 * t + 1];
        Tensor da = a.copy_to(Device::vulkan(0)), db = b.copy_to(Device::vulkan(0));
        for (int rep = 0; rep < 20; ++rep) {
          Tensor dc = Tensor::empty({500}, DataType::float32(), Device::vulkan(0));
          fn(da, db, dc, static_cast<double>(rep));
          Tensor c = dc.copy_to(Device::cpu());
          for (int64_t i = 0; i < 500; ++i) {
            float want = static_cast<float*>(a.data())[i] * rep + static_cast<float*>(b.data())[i];
            if (std::fabs(static_cast<float*>(c.data())[i] - want) > 1e-5f * (1 + std::fabs(want)))
              throw std::runtime_error(str_cat("rep ", rep, " i ", i));
          }
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;
}

// ---- child processes -------------------------------------------------------------------------

// Run only as a child (ANVIL_VULKAN_TEST_CHILD=1, --gtest_also_run_disabled_tests): both
// kernels, then a clean exit. DISABLED_ keeps it out of the test list of a normal run.
TEST(VulkanChild, DISABLED_RunsBothKernelsAndExits) {
  if (!env_flag("ANVIL_VULKAN_TEST_CHILD")) GTEST_SKIP() << "runs as a child of VulkanModule.*InChild tests";
  ANVIL_SKIP_WITHOUT_VULKAN();
  register_runtime_functions();
  Module m = make_vulkan_module({axpy_kernel(false), axpy_kernel(true, "axpy_u")});
  check_axpy(m.get_function("axpy"), 1000, 2.0f);
  check_axpy(m.get_function("axpy_u"), 1000, 0.5f);
  bool disabled = env_flag("ANVIL_VULKAN_DISABLE_PUSH_DESCRIPTOR", "TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR");
  bool push = VulkanInstance::get()->device(0).use_push_descriptor();
  std::cout << "[ child ] push descriptors " << (push ? "on" : "off") << ", validation "
            << (VulkanInstance::get()->validation_enabled() ? "on" : "off") << "\n";
  if (disabled)
    EXPECT_FALSE(push);
  else
    EXPECT_EQ(push, query_device_limits(0)->supports_push_descriptor);
  EXPECT_EQ(Registry::get("vulkan.validation_error_count")().as_int(), 0);
  if (env_flag("ANVIL_VULKAN_TEST_CHILD_LEAK")) {
    // A buffer nobody destroys: the validation layer must report it when the device goes at exit.
    VulkanDevice& d = VulkanInstance::get()->device(0);
    VkBufferCreateInfo info{};
    info.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
    info.size = 256;
    info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT;
    VkBuffer leaked = VK_NULL_HANDLE;
    ASSERT_EQ(d.fn().vkCreateBuffer(d.handle(), &info, nullptr, &leaked), VK_SUCCESS);
  }
}

struct ChildResult {
  int status = -1;
  std::string output;
};

ChildResult run_child(const std::string& env) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  EXPECT_GT(len, 0);
  self[len > 0 ? len : 0] = '\0';
  // Under ASan, LeakSanitizer reports 128 bytes that the Vulkan driver stack allocates in a
  // library it unloads at vkDestroyInstance (not ours: "<unknown module>"); the child skips it.
  const char* asan = std::getenv("ASAN_OPTIONS");
  std::string asan_env =
      std::string("ASAN_OPTIONS=") + (asan && *asan ? std::string(asan) + ":" : "") + "detect_leaks=0 ";
  // The child sees only the switches given here, not those this process runs under.
  std::string clear;
  for (const char* base : {"DISABLE_PUSH_DESCRIPTOR", "ENABLE_VALIDATION_LAYERS", "DEBUG_SHADER_SAVEPATH"})
    clear += str_cat("-u ANVIL_VULKAN_", base, " -u TVM_VULKAN_", base, " ");
  std::string cmd = "env " + clear + "-u ANVIL_VULKAN_DEVICE ANVIL_VULKAN_TEST_CHILD=1 " + asan_env + env + " '" +
                    self + "' --gtest_also_run_disabled_tests --gtest_filter=VulkanChild.DISABLED_RunsBothKernelsAndExits 2>&1";
  ChildResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool validation_layer_installed() {
  return std::filesystem::exists("/usr/share/vulkan/explicit_layer.d/VkLayer_khronos_validation.json");
}

TEST(VulkanModule, ValidationLayersSeeNoErrorsThroughShutdownInChild) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  if (!validation_layer_installed()) GTEST_SKIP() << "VK_LAYER_KHRONOS_validation is not installed";
  ChildResult r = run_child("ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS=1 ANVIL_VULKAN_DEVICE=0");
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("validation error"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("push descriptors on, validation on"), std::string::npos) << r.output;
}

// The check above is only worth something if a real mistake shows: a leaked buffer must be
// reported at exit-time shutdown.
TEST(VulkanModule, ValidationLayersReportALeakAtShutdownInChild) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  if (!validation_layer_installed()) GTEST_SKIP() << "VK_LAYER_KHRONOS_validation is not installed";
  ChildResult r = run_child("ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS=1 ANVIL_VULKAN_TEST_CHILD_LEAK=1");
  EXPECT_NE(r.output.find("[  PASSED  ] 1 test"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("[anvil vulkan validation error]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("VkBuffer"), std::string::npos) << r.output;
}

TEST(VulkanModule, DescriptorSetPathAndShaderSavePathInChild) {
  ANVIL_SKIP_WITHOUT_VULKAN();
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("anvil_vk_shaders_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::string layers = validation_layer_installed() ? "TVM_VULKAN_ENABLE_VALIDATION_LAYERS=1 " : "";
  ChildResult r = run_child(
      layers +
      "ANVIL_VULKAN_DEVICE=99 TVM_VULKAN_DISABLE_PUSH_DESCRIPTOR=1 ANVIL_VULKAN_DEBUG_SHADER_SAVEPATH=" + dir.string());
  EXPECT_NE(r.output.find("ANVIL_VULKAN_DEVICE=99 is not a device index"), std::string::npos) << r.output;
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("push descriptors off"), std::string::npos) << r.output;
  if (!layers.empty()) {
    EXPECT_NE(r.output.find("validation on"), std::string::npos) << r.output;
  }
  EXPECT_EQ(r.output.find("validation error"), std::string::npos) << r.output;
  for (const char* name : {"axpy", "axpy_u"}) {
    std::filesystem::path spv = dir / (std::string(name) + ".spv");
    ASSERT_TRUE(std::filesystem::exists(spv)) << spv;
    EXPECT_EQ(std::filesystem::file_size(spv),
              testing::assemble(testing::axpy_spirv_text(std::string(name) == "axpy_u")).size() * 4);
#ifdef ANVIL_HAVE_SPIRV_TOOLS
    std::ifstream in(dir / (std::string(name) + ".spvasm"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("OpEntryPoint GLCompute"), std::string::npos) << text;
#endif
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace anvil::vulkan
