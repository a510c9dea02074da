// The SPIR-V back end's kernels on a real Vulkan device (lavapipe in CI) through
// make_vulkan_module, on fresh random inputs (fixed, printed seed) against C++ references.
// Skipped, with the reason printed, on machines without a Vulkan device.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "anvil/codegen/spirv/codegen_spirv.h"
#include "anvil/codegen/spirv/spirv_test_kernels.h"
#include "anvil/codegen/spirv/spirv_test_util.h"
#include "anvil/tir/workgroup_barrier.h"
#include "anvil/ir/float16.h"
#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/device/vulkan/vulkan_module.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"

namespace anvil::codegen::spirv {
namespace {

using ir::DataType;
using ir::PrimExpr;

class SpirvRun : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    ANVIL_SKIP_WITHOUT_VULKAN();
    auto limits = vulkan::query_device_limits(0);
    ASSERT_TRUE(limits.has_value());
    limits_ = *limits;
    target_ = resolve_vulkan_target(Target::parse("vulkan -from_device=0"));
    std::cout << "[ device ] " << limits_.device_name << ", seed " << kSeed << "\n";
  }

  // With ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS=1 the layers check every dispatch.
  void TearDown() override {
    if (vulkan::num_devices() > 0) {
      EXPECT_EQ(Registry::get("vulkan.validation_error_count")().as_int(), 0);
    }
  }

  // One kernel as a vulkan module.
  Module build(const tir::PrimFunc& f) { return vulkan::make_vulkan_module({testing::compile(f, target_)}); }

  Tensor upload(const void* data, std::initializer_list<int64_t> shape, DataType t) {
    Tensor x = Tensor::empty(shape, t, Device::vulkan(0));
    x.copy_from_bytes(data, x.nbytes());
    return x;
  }
  template <typename T>
  std::vector<T> download(const Tensor& x) {
    DeviceAPI::get(Device::vulkan(0))->sync(Device::vulkan(0), nullptr);
    std::vector<T> out(static_cast<size_t>(x.numel()));
    x.copy_to_bytes(out.data(), x.nbytes());
    return out;
  }

  static constexpr uint32_t kSeed = 20261207;
  std::mt19937 rng_{kSeed};
  vulkan::DeviceLimits limits_;
  VulkanTarget target_;
};

TEST_F(SpirvRun, ElementwiseInt32AndFloat32) {
  const int n = 1000;
  std::vector<int32_t> ai(n);
  std::vector<float> af(n);
  std::uniform_int_distribution<int32_t> di(-1000, 1000);
  std::uniform_real_distribution<float> df(-4, 4);
  for (int i = 0; i < n; ++i) ai[i] = di(rng_), af[i] = df(rng_);
  {
    Module m = build(testing::elementwise("ew_i32", DataType::int32(), DataType::int32(), n, [](PrimExpr x) {
      return ir::floordiv(x, 7) * 3 + ir::floormod(x, 7);
    }));
    Tensor a = upload(ai.data(), {n}, DataType::int32()), b = Tensor::empty({n}, DataType::int32(), Device::vulkan(0));
    m["ew_i32"](a, b);
    auto out = download<int32_t>(b);
    for (int i = 0; i < n; ++i) {
      int32_t q = ai[i] / 7 - ((ai[i] % 7 != 0) && ((ai[i] < 0) != false) ? 1 : 0);
      int32_t r = ai[i] - q * 7;
      ASSERT_EQ(out[i], q * 3 + r) << "i=" << i << " a=" << ai[i];
    }
  }
  {
    Module m = build(testing::elementwise("ew_f32", DataType::float32(), DataType::float32(), n,
                                          [](PrimExpr x) { return ir::exp(x) * 0.5f + ir::tanh(x) - ir::sigmoid(x); }));
    Tensor a = upload(af.data(), {n}, DataType::float32()), b = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
    m["ew_f32"](a, b);
    auto out = download<float>(b);
    for (int i = 0; i < n; ++i) {
      double x = af[i], want = std::exp(x) * 0.5 + std::tanh(x) - 1 / (1 + std::exp(-x));
      ASSERT_NEAR(out[i], want, 1e-4 * (1 + std::fabs(want))) << "x=" << x;
    }
  }
}

TEST_F(SpirvRun, NarrowAndWideTypes) {
  const int n = 300;
  if (target_.supports_int8 && target_.supports_8bit_buffer) {
    std::vector<int8_t> a(n);
    for (auto& v : a) v = static_cast<int8_t>(rng_() & 0xFF);
    Module m = build(testing::elementwise("ew_i8", DataType::int8(), DataType::int8(), n,
                                          [](PrimExpr x) { return x * ir::make_const(DataType::int8(), 3) + x; }));
    Tensor ta = upload(a.data(), {n}, DataType::int8()), tb = Tensor::empty({n}, DataType::int8(), Device::vulkan(0));
    m["ew_i8"](ta, tb);
    auto out = download<int8_t>(tb);
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<int8_t>(a[i] * 4)) << i;
  }
  if (target_.supports_int16 && target_.supports_16bit_buffer && target_.supports_8bit_buffer) {
    std::vector<uint8_t> a(n);
    for (auto& v : a) v = static_cast<uint8_t>(rng_() & 0xFF);
    // uint8 in, int16 out: widening and arithmetic in int16.
    Module m = build(testing::elementwise("ew_u8_i16", DataType::uint8(), DataType::int16(), n, [](PrimExpr x) {
      return ir::cast(DataType::int16(), x) * ir::make_const(DataType::int16(), -3);
    }));
    Tensor ta = upload(a.data(), {n}, DataType::uint8()), tb = Tensor::empty({n}, DataType::int16(), Device::vulkan(0));
    m["ew_u8_i16"](ta, tb);
    auto out = download<int16_t>(tb);
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<int16_t>(a[i] * -3)) << i;
  }
  if (target_.supports_int64) {
    std::vector<int64_t> a(n);
    for (auto& v : a) v = static_cast<int64_t>(rng_()) * 1000003 - (int64_t{1} << 40);
    Module m = build(testing::elementwise("ew_i64", DataType::int64(), DataType::int64(), n, [](PrimExpr x) {
      return ir::floordiv(x, ir::make_const(DataType::int64(), 1000)) + x;
    }));
    Tensor ta = upload(a.data(), {n}, DataType::int64()), tb = Tensor::empty({n}, DataType::int64(), Device::vulkan(0));
    m["ew_i64"](ta, tb);
    auto out = download<int64_t>(tb);
    for (int i = 0; i < n; ++i) {
      int64_t q = a[i] / 1000 - ((a[i] % 1000 != 0 && a[i] < 0) ? 1 : 0);
      ASSERT_EQ(out[i], q + a[i]) << i;
    }
  }
  if (target_.supports_16bit_buffer) {
    std::vector<uint16_t> a(n);
    std::uniform_real_distribution<double> d(-8, 8);
    for (auto& v : a) v = ir::double_to_half_bits(d(rng_));
    Module m = build(testing::elementwise("ew_f16", DataType::float16(), DataType::float32(), n,
                                          [](PrimExpr x) { return ir::cast(DataType::float32(), x) * 2.0f; }));
    Tensor ta = upload(a.data(), {n}, DataType::float16()), tb = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
    m["ew_f16"](ta, tb);
    auto out = download<float>(tb);
    for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<float>(ir::half_bits_to_double(a[i]) * 2)) << i;
  }
  if (target_.supports_float64) {
    std::vector<double> a(n);
    std::uniform_real_distribution<double> d(0.1, 8);
    for (auto& v : a) v = d(rng_);
    Module m = build(testing::elementwise("ew_f64", DataType::float64(), DataType::float64(), n,
                                          [](PrimExpr x) { return ir::sqrt(x) * x + ir::floor(x); }));
    Tensor ta = upload(a.data(), {n}, DataType::float64()), tb = Tensor::empty({n}, DataType::float64(), Device::vulkan(0));
    m["ew_f64"](ta, tb);
    auto out = download<double>(tb);
    for (int i = 0; i < n; ++i) ASSERT_NEAR(out[i], std::sqrt(a[i]) * a[i] + std::floor(a[i]), 1e-12) << i;
  }
}

TEST_F(SpirvRun, AxpyWithSymbolicLengthAndAScalar) {
  Module m = build(testing::te_axpy());
  for (int n : {1, 64, 1000}) {
    std::vector<float> a(n), b(n);
    std::uniform_real_distribution<float> d(-1, 1);
    for (int i = 0; i < n; ++i) a[i] = d(rng_), b[i] = d(rng_);
    Tensor ta = upload(a.data(), {n}, DataType::float32()), tb = upload(b.data(), {n}, DataType::float32());
    Tensor tc = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
    m["axpy"](ta, 2.5, tb, tc);
    auto out = download<float>(tc);
    for (int i = 0; i < n; ++i) ASSERT_FLOAT_EQ(out[i], a[i] * 2.5f + b[i]) << "n=" << n << " i=" << i;
  }
}

TEST_F(SpirvRun, MatmulTwoDimensionalGrid) {
  const int M = 32, N = 24, K = 16;
  Module m = build(testing::te_matmul(M, N, K));
  std::vector<float> a(M * K), b(K * N);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : a) v = d(rng_);
  for (auto& v : b) v = d(rng_);
  Tensor ta = upload(a.data(), {M, K}, DataType::float32()), tb = upload(b.data(), {K, N}, DataType::float32());
  Tensor tc = Tensor::empty({M, N}, DataType::float32(), Device::vulkan(0));
  m["matmul"](ta, tb, tc);
  auto out = download<float>(tc);
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double want = 0;
      for (int p = 0; p < K; ++p) want += double(a[i * K + p]) * b[p * N + j];
      ASSERT_NEAR(out[i * N + j], want, 1e-4) << i << "," << j;
    }
}

TEST_F(SpirvRun, SharedMemoryReductionWithBarriers) {
  const int blocks = 8;
  ir::Buffer in = ir::decl_buffer({blocks * 64}, DataType::float32(), "inp");
  ir::Buffer out = ir::decl_buffer({blocks}, DataType::float32(), "out");
  ir::Var sh_data("sh", ir::handle_type());
  ir::Buffer sh = ir::Buffer::make(sh_data, DataType::float32(), {64}, {}, PrimExpr(), "sh", 64, "shared");
  ir::Var bx("bx"), tx("tx"), s("s");
  PrimExpr stride = ir::shift_right(PrimExpr(32), s);
  tir::Stmt tree = tir::make_for(
      s, 0, 6,
      tir::workgroup_barrier_after(tir::if_then_else(
          tx < stride, tir::buffer_store(sh, ir::buffer_load(sh, {tx}) + ir::buffer_load(sh, {tx + stride}), {tx}))));
  tir::Stmt body = tir::seq({tir::workgroup_barrier_after(tir::buffer_store(sh, ir::buffer_load(in, {bx * 64 + tx}), {tx})),
                             tree, tir::if_then_else(ir::eq(tx, 0), tir::buffer_store(out, ir::buffer_load(sh, {0}), {bx}))});
  tir::Stmt k = tir::make_thread_for(
      bx, 0, blocks, "blockIdx.x",
      tir::make_thread_for(tx, 0, 64, "threadIdx.x", tir::allocate(sh_data, DataType::float32(), {64}, "shared", body)));
  Module m = build(tir::make_prim_func("block_sum", {in, out}, k));
  std::vector<float> a(blocks * 64);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : a) v = d(rng_);
  Tensor ta = upload(a.data(), {blocks * 64}, DataType::float32());
  Tensor tb = Tensor::empty({blocks}, DataType::float32(), Device::vulkan(0));
  m["block_sum"](ta, tb);
  auto res = download<float>(tb);
  for (int b = 0; b < blocks; ++b) {
    double want = 0;
    for (int i = 0; i < 64; ++i) want += a[b * 64 + i];
    ASSERT_NEAR(res[b], want, 1e-4) << b;
  }
}

TEST_F(SpirvRun, FortyScalarsThroughTheUniformBuffer) {
  std::vector<tir::FuncParam> params;
  std::vector<ir::Var> vars;
  ir::Buffer outb = ir::decl_buffer({40}, DataType::float32(), "out");
  for (int i = 0; i < 40; ++i) {
    vars.emplace_back("s" + std::to_string(i), i % 2 ? DataType::float32() : DataType::int32());
    params.push_back(vars.back());
  }
  params.push_back(outb);
  std::vector<tir::Stmt> stores;
  for (int i = 0; i < 40; ++i) stores.push_back(tir::buffer_store(outb, ir::cast(DataType::float32(), vars[i]), {i}));
  ir::Var tx("tx");
  auto f = tir::make_prim_func("forty", params, tir::make_thread_for(tx, 0, 1, "threadIdx.x", tir::seq(stores)));
  vulkan::KernelInfo info = testing::compile(f, target_);
  ASSERT_TRUE(info.block_in_uniform);
  Module m = vulkan::make_vulkan_module({info});
  std::vector<Value> args;
  std::vector<float> want;
  for (int i = 0; i < 40; ++i) {
    if (i % 2) args.emplace_back(0.25 * i), want.push_back(0.25f * i);
    else args.emplace_back(int64_t{-3 * i}), want.push_back(static_cast<float>(-3 * i));
  }
  Tensor to = Tensor::empty({40}, DataType::float32(), Device::vulkan(0));
  args.emplace_back(to);
  m["forty"].call(args);
  EXPECT_EQ(download<float>(to), want);
}

struct MathCase {
  const char* name;
  PrimExpr (*fn)(PrimExpr);
  double (*ref)(double);
  double lo, hi, tol;  // tol 0: exact
};

TEST_F(SpirvRun, MathIntrinsicsAgainstTheCLibrary) {
  const MathCase cases[] = {
      {"exp", [](PrimExpr x) { return ir::exp(x); }, [](double x) { return std::exp(x); }, -4, 4, 1e-5},
      {"log", [](PrimExpr x) { return ir::log(x); }, [](double x) { return std::log(x); }, 0.1, 10, 1e-5},
      {"sqrt", [](PrimExpr x) { return ir::sqrt(x); }, [](double x) { return std::sqrt(x); }, 0, 10, 1e-6},
      {"rsqrt", [](PrimExpr x) { return ir::rsqrt(x); }, [](double x) { return 1 / std::sqrt(x); }, 0.1, 10, 1e-5},
      {"tanh", [](PrimExpr x) { return ir::tanh(x); }, [](double x) { return std::tanh(x); }, -30, 30, 1e-5},
      {"erf", [](PrimExpr x) { return ir::erf(x); }, [](double x) { return std::erf(x); }, -3, 3, 1e-6},
      {"sigmoid", [](PrimExpr x) { return ir::sigmoid(x); }, [](double x) { return 1 / (1 + std::exp(-x)); }, -20, 20, 1e-6},
      {"pow", [](PrimExpr x) { return ir::pow(x, x); }, [](double x) { return std::pow(x, x); }, 0.1, 3, 1e-5},
      {"floor", [](PrimExpr x) { return ir::floor(x); }, [](double x) { return std::floor(x); }, -5, 5, 0},
      {"ceil", [](PrimExpr x) { return ir::ceil(x); }, [](double x) { return std::ceil(x); }, -5, 5, 0},
      {"round", [](PrimExpr x) { return ir::round(ir::floor(x * 2.0f) * 0.5f); },
       [](double x) { return std::nearbyint(std::floor(x * 2) * 0.5); }, -5, 5, 0},
      {"trunc", [](PrimExpr x) { return ir::trunc(x); }, [](double x) { return std::trunc(x); }, -5, 5, 0},
      {"abs", [](PrimExpr x) { return ir::abs(x); }, [](double x) { return std::fabs(x); }, -5, 5, 0},
      {"fma", [](PrimExpr x) { return ir::fma(x, x, x); }, [](double x) { return x * x + x; }, -5, 5, 1e-6},
      {"sin", [](PrimExpr x) { return ir::sin(x); }, [](double x) { return std::sin(x); }, -3, 3, 1e-3},
      {"cos", [](PrimExpr x) { return ir::cos(x); }, [](double x) { return std::cos(x); }, -3, 3, 1e-3},
      {"tan", [](PrimExpr x) { return ir::tan(x); }, [](double x) { return std::tan(x); }, -1.2, 1.2, 1e-3},
      {"asin", [](PrimExpr x) { return ir::asin(x); }, [](double x) { return std::asin(x); }, -0.99, 0.99, 1e-3},
      {"acos", [](PrimExpr x) { return ir::acos(x); }, [](double x) { return std::acos(x); }, -0.99, 0.99, 1e-3},
      {"atan", [](PrimExpr x) { return ir::atan(x); }, [](double x) { return std::atan(x); }, -5, 5, 1e-4},
      {"sinh", [](PrimExpr x) { return ir::sinh(x); }, [](double x) { return std::sinh(x); }, -3, 3, 1e-4},
      {"cosh", [](PrimExpr x) { return ir::cosh(x); }, [](double x) { return std::cosh(x); }, -3, 3, 1e-4},
      {"asinh", [](PrimExpr x) { return ir::asinh(x); }, [](double x) { return std::asinh(x); }, -5, 5, 1e-4},
      {"acosh", [](PrimExpr x) { return ir::acosh(x); }, [](double x) { return std::acosh(x); }, 1.01, 5, 1e-4},
      {"atanh", [](PrimExpr x) { return ir::atanh(x); }, [](double x) { return std::atanh(x); }, -0.9, 0.9, 1e-4},
      {"log2", [](PrimExpr x) { return ir::log2(x); }, [](double x) { return std::log2(x); }, 0.1, 100, 1e-5},
      {"log10", [](PrimExpr x) { return ir::log10(x); }, [](double x) { return std::log10(x); }, 0.1, 100, 1e-5},
      {"copysign", [](PrimExpr x) { return ir::copysign(x + 1.0f, -x); },
       [](double x) { return std::copysign(double(float(x) + 1.0f), -x); }, -5, 5, 0},
  };
  const int n = 256;
  for (const MathCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<float> a(n);
    std::uniform_real_distribution<double> d(c.lo, c.hi);
    for (auto& v : a) v = static_cast<float>(d(rng_));
    std::string name = std::string("math_") + c.name;
    Module m = build(testing::elementwise(name, DataType::float32(), DataType::float32(), n, c.fn));
    Tensor ta = upload(a.data(), {n}, DataType::float32()), tb = Tensor::empty({n}, DataType::float32(), Device::vulkan(0));
    m[name](ta, tb);
    auto out = download<float>(tb);
    for (int i = 0; i < n; ++i) {
      double want = c.ref(a[i]);
      if (c.tol == 0) ASSERT_EQ(out[i], static_cast<float>(want)) << "x=" << a[i];
      else ASSERT_NEAR(out[i], want, c.tol * (1 + std::fabs(want))) << "x=" << a[i];
    }
  }
}

TEST_F(SpirvRun, LoopWithIfElseAndALocalAccumulator) {
  ir::Buffer A = ir::decl_buffer({64, 8}, DataType::float32(), "A");
  ir::Buffer B = ir::decl_buffer({64}, DataType::float32(), "B");
  ir::Var acc_data("acc", ir::handle_type());
  ir::Buffer acc = ir::Buffer::make(acc_data, DataType::float32(), {1}, {}, PrimExpr(), "acc", 64, "local");
  ir::Var tx("tx"), k("k");
  tir::Stmt step = tir::if_then_else(
      ir::eq(ir::floormod(k, 2), 0), tir::buffer_store(acc, ir::buffer_load(acc, {0}) + ir::buffer_load(A, {tx, k}), {0}),
      tir::buffer_store(acc, ir::buffer_load(acc, {0}) - ir::buffer_load(A, {tx, k}), {0}));
  tir::Stmt body = tir::seq({tir::buffer_store(acc, 0.0f, {0}), tir::make_for(k, 0, 8, step),
                             tir::buffer_store(B, ir::buffer_load(acc, {0}), {tx})});
  tir::Stmt s = tir::make_thread_for(tx, 0, 64, "threadIdx.x", tir::allocate(acc_data, DataType::float32(), {1}, "local", body));
  Module m = build(tir::make_prim_func("alternating", {A, B}, s));
  std::vector<float> a(64 * 8);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& v : a) v = d(rng_);
  Tensor ta = upload(a.data(), {64, 8}, DataType::float32()), tb = Tensor::empty({64}, DataType::float32(), Device::vulkan(0));
  m["alternating"](ta, tb);
  auto out = download<float>(tb);
  for (int i = 0; i < 64; ++i) {
    float want = 0;
    for (int j = 0; j < 8; ++j) want = j % 2 == 0 ? want + a[i * 8 + j] : want - a[i * 8 + j];
    ASSERT_FLOAT_EQ(out[i], want) << i;
  }
}

TEST_F(SpirvRun, ShorterSiblingThreadLoopIsGuarded) {
  ir::Buffer B = ir::decl_buffer({64}, DataType::int32(), "B");
  ir::Buffer C = ir::decl_buffer({64}, DataType::int32(), "C");
  ir::Var t1("t1"), t2("t2");
  tir::Stmt body = tir::seq({tir::make_thread_for(t1, 0, 64, "threadIdx.x", tir::buffer_store(B, t1 * 2, {t1})),
                             tir::make_thread_for(t2, 0, 32, "threadIdx.x", tir::buffer_store(C, t2 + 100, {t2}))});
  vulkan::KernelInfo info = testing::compile(tir::make_prim_func("siblings", {B, C}, body), target_);
  EXPECT_EQ(info.workgroup_size[0], 64u);
  Module m = vulkan::make_vulkan_module({info});
  std::vector<int32_t> init(64, -1);
  Tensor tb = upload(init.data(), {64}, DataType::int32()), tc = upload(init.data(), {64}, DataType::int32());
  m["siblings"](tb, tc);
  auto b = download<int32_t>(tb), c = download<int32_t>(tc);
  for (int i = 0; i < 64; ++i) {
    ASSERT_EQ(b[i], 2 * i) << i;
    ASSERT_EQ(c[i], i < 32 ? i + 100 : -1) << i;
  }
}

}  // namespace
}  // namespace anvil::codegen::spirv
