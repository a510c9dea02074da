// The code generators' shared conformance suite: the same hand-built PrimFuncs compiled for each
// target ("llvm": JIT in process; "c": C99 exported to a temporary .so and loaded; "vulkan":
// SPIR-V run on the machine's Vulkan device, lavapipe in CI, through a wrapper that mirrors the
// host tensors of a call on the device and copies them back), run on fresh random inputs and compared with naive double references computed here (fixed, printed
// seeds; tolerances stated per test). Also: argument errors come back as anvil::Error with the
// documented messages, symbolic shapes at several sizes from one compilation, parallel loops,
// vector code, math accuracy, export/load, cross compilation and a corrupted library.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>

#include "anvil/base/error.h"
#include "anvil/base/int_math.h"
#include "anvil/codegen/c/codegen_c.h"
#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/pipeline/build.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/test_util.h"
#include "anvil/te/lower.h"
#include "anvil/te/reduction.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {
namespace {

using testing::error_of;

namespace fs = std::filesystem;
using ir::buffer_load;
using ir::decl_buffer;
using ir::PrimExpr;
using ir::Var;
using tir::Buffer;
using tir::ForKind;
using tir::make_for;
using tir::make_prim_func;
using tir::PrimFunc;
using tir::Stmt;

constexpr uint32_t kSeed = 20261130;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }
int32_t* i32(Tensor& t) { return static_cast<int32_t*>(t.data()); }

// Values in [-2, 2) unless told otherwise.
Tensor random_f32(const std::vector<int64_t>& shape, std::mt19937& rng, float lo = -2, float hi = 2) {
  return testing::random_f32(shape, rng, lo, hi);
}

Tensor zeros_f32(std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::memset(t.data(), 0, static_cast<size_t>(n) * 4);
  return t;
}

void expect_close(const float* got, const std::vector<double>& want, double rtol, double atol, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), atol + rtol * std::abs(want[i]))
        << what << " at " << i << ": got " << got[i] << ", want " << want[i];
  }
}

// ---- kernels -------------------------------------------------------------------------------

// C[i] = A[i] + B[i], n symbolic.
PrimFunc vector_add() {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A"), B = decl_buffer({n}, DataType::float32(), "B");
  Buffer C = decl_buffer({n}, DataType::float32(), "C");
  return make_prim_func("vector_add", {A, B, C},
                        make_for(i, 0, n, tir::buffer_store(C, buffer_load(A, {i}) + buffer_load(B, {i}), {i})));
}

// C[i, j] = A[i, j] * s + B[j] (broadcast over rows), m, n symbolic, s a float scalar.
PrimFunc broadcast_add() {
  Var m = ir::size_var("m"), n = ir::size_var("n"), i("i"), j("j"), s("s", DataType::float32());
  Buffer A = decl_buffer({m, n}, DataType::float32(), "A"), B = decl_buffer({n}, DataType::float32(), "B");
  Buffer C = decl_buffer({m, n}, DataType::float32(), "C");
  Stmt body = make_for(i, 0, m, make_for(j, 0, n, tir::buffer_store(C, buffer_load(A, {i, j}) * s + buffer_load(B, {j}), {i, j})));
  return make_prim_func("broadcast_add", {A, B, C, s}, body);
}

// B[i] = sum_j A[i, j], rows in parallel.
PrimFunc row_sum() {
  Var m = ir::size_var("m"), n = ir::size_var("n"), i("i"), j("j");
  Buffer A = decl_buffer({m, n}, DataType::float32(), "A"), B = decl_buffer({m}, DataType::float32(), "B");
  Stmt body = make_for(i, 0, m,
                       tir::seq({tir::buffer_store(B, 0.0, {i}),
                                 make_for(j, 0, n, tir::buffer_store(B, buffer_load(B, {i}) + buffer_load(A, {i, j}), {i}))}),
                       ForKind::kParallel);
  return make_prim_func("row_sum", {A, B}, body);
}

// Row softmax with a scratch buffer (max, sum) allocated in the kernel.
PrimFunc softmax() {
  Var m = ir::size_var("m"), n = ir::size_var("n"), i("i"), j("j"), j2("j2"), j3("j3");
  Buffer A = decl_buffer({m, n}, DataType::float32(), "A"), B = decl_buffer({m, n}, DataType::float32(), "B");
  Buffer T = decl_buffer({2}, DataType::float32(), "T", "local");
  Stmt row = tir::seq({
      tir::buffer_store(T, buffer_load(A, {i, 0}), {0}),
      make_for(j, 0, n, tir::buffer_store(T, ir::max(buffer_load(T, {0}), buffer_load(A, {i, j})), {0})),
      tir::buffer_store(T, 0.0, {1}),
      make_for(j2, 0, n,
               tir::seq({tir::buffer_store(B, ir::exp(buffer_load(A, {i, j2}) - buffer_load(T, {0})), {i, j2}),
                         tir::buffer_store(T, buffer_load(T, {1}) + buffer_load(B, {i, j2}), {1})})),
      make_for(j3, 0, n, tir::buffer_store(B, buffer_load(B, {i, j3}) / buffer_load(T, {1}), {i, j3})),
  });
  Stmt body = tir::allocate(T->data(), DataType::float32(), {2}, "local", make_for(i, 0, m, row));
  return make_prim_func("softmax", {A, B}, body);
}

// C = A x B, 64 x 64 constant shapes, j split by 8 (divides) with an unrolled inner loop.
PrimFunc matmul64() {
  Var i("i"), jo("jo"), ji("ji"), k("k");
  Buffer A = decl_buffer({64, 64}, DataType::float32(), "A"), B = decl_buffer({64, 64}, DataType::float32(), "B");
  Buffer C = decl_buffer({64, 64}, DataType::float32(), "C");
  PrimExpr j = jo * 8 + ji;
  Stmt update = tir::buffer_store(C, buffer_load(C, {i, j}) + buffer_load(A, {i, k}) * buffer_load(B, {k, j}), {i, j});
  Stmt body = make_for(i, 0, 64,
                       make_for(jo, 0, 8,
                                tir::seq({make_for(ji, 0, 8, tir::buffer_store(C, 0.0, {i, j}), ForKind::kUnrolled),
                                          make_for(k, 0, 64, make_for(ji, 0, 8, update, ForKind::kUnrolled))})),
                       ForKind::kParallel);
  return make_prim_func("matmul", {A, B, C}, body);
}

// C = A x B with symbolic n (square), j split by 8 (may not divide): guarded tail.
PrimFunc matmul_split_guarded() {
  Var n = ir::size_var("n"), i("i"), jo("jo"), ji("ji"), k("k");
  Buffer A = decl_buffer({n, n}, DataType::float32(), "A"), B = decl_buffer({n, n}, DataType::float32(), "B");
  Buffer C = decl_buffer({n, n}, DataType::float32(), "C");
  PrimExpr j = jo * 8 + ji;
  Stmt init = tir::buffer_store(C, 0.0, {i, j});
  Stmt update = tir::buffer_store(C, buffer_load(C, {i, j}) + buffer_load(A, {i, k}) * buffer_load(B, {k, j}), {i, j});
  Stmt body = make_for(
      i, 0, n,
      make_for(jo, 0, ir::floordiv(n + 7, 8),
               make_for(ji, 0, 8,
                        tir::if_then_else(j < n, tir::seq({init, make_for(k, 0, n, update)})))));
  return make_prim_func("matmul_guarded", {A, B, C}, body);
}

// Vector code: B[8i .. 8i+7] = A[8i .. 8i+7] * 2 + A[2 * (8i .. 8i+7) mod n] (gather), n % 8 == 0.
PrimFunc vector_ops() {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A"), B = decl_buffer({n}, DataType::float32(), "B");
  PrimExpr contiguous = ir::ramp(i * 8, 1, 8);
  PrimExpr strided = ir::floormod(ir::ramp(i * 16, 2, 8), ir::broadcast(n, 8));
  Stmt body = make_for(i, 0, ir::floordiv(n, 8),
                       tir::buffer_store(B, buffer_load(A, {contiguous}) * ir::broadcast(2.0, 8) + buffer_load(A, {strided}),
                                         {contiguous}));
  return make_prim_func("vector_ops", {A, B}, body);
}

// Integer semantics: out[i] = [floordiv, floormod, div, min, max, select, float->int cast] of a[i], b[i].
PrimFunc int_ops() {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::int32(), "A"), B = decl_buffer({n}, DataType::int32(), "B");
  Buffer O = decl_buffer({n, 8}, DataType::int32(), "O");
  Buffer F = decl_buffer({n}, DataType::float32(), "F");
  PrimExpr a = buffer_load(A, {i}), b = buffer_load(B, {i});
  Stmt body = make_for(
      i, 0, n,
      tir::seq({tir::buffer_store(O, ir::floordiv(a, b), {i, 0}), tir::buffer_store(O, ir::floormod(a, b), {i, 1}),
                tir::buffer_store(O, a / b, {i, 2}), tir::buffer_store(O, ir::min(a, b), {i, 3}),
                tir::buffer_store(O, ir::max(a, b), {i, 4}), tir::buffer_store(O, ir::select(a < b, a * 3, b - 1), {i, 5}),
                tir::buffer_store(O, ir::cast(DataType::int32(), buffer_load(F, {i})), {i, 6}),
                tir::buffer_store(O, ir::cast(DataType::int32(), ir::cast(DataType::float32(), a) * 0.5), {i, 7})}));
  return make_prim_func("int_ops", {A, B, F, O}, body);
}

// out[i] = op(x[i]) for exp, tanh, erf, sigmoid, with 16-lane vectors (n % 16 == 0).
PrimFunc math_kernel(const std::string& name, ir::CallOp op, int lanes) {
  Var n = ir::size_var("n"), i("i");
  Buffer X = decl_buffer({n}, DataType::float32(), "X"), Y = decl_buffer({n}, DataType::float32(), "Y");
  PrimExpr idx = ir::ramp(i * lanes, 1, lanes);
  Stmt body = make_for(i, 0, ir::floordiv(n, lanes), tir::buffer_store(Y, ir::call(op, {buffer_load(X, {idx})}), {idx}));
  return make_prim_func(name, {X, Y}, body);
}

// ---- the fixture ---------------------------------------------------------------------------

// The kernels of a device module called with host tensors, as the suite calls every target: each
// CPU tensor argument is copied to the device, the kernel runs, and every tensor is copied back
// into the caller's (so outputs and in-place updates land where the tests read them). Scalars
// and device tensors pass as they are.
class HostMirrorModule final : public ModuleNode {
 public:
  HostMirrorModule(Module device_module, Device device) : inner_(std::move(device_module)), device_(device) {}
  std::string kind() const override { return "test.host_mirror"; }
  std::optional<Function> get_local_function(const std::string& name) override {
    std::optional<Function> f = inner_.find_function(name);
    if (!f) return std::nullopt;
    Device dev = device_;
    Function kernel = *f;
    return Function::from_packed(
        [kernel, dev](Args args) -> Value {
          std::vector<Value> moved(args.begin(), args.end());
          std::vector<std::pair<Tensor, Tensor>> mirrors;  // (host, device)
          for (Value& v : moved) {
            if (v.kind() != ValueKind::kTensor || v.as_tensor().device().type != kDLCPU) continue;
            Tensor host = v.as_tensor();
            mirrors.emplace_back(host, host.copy_to(dev));
            v = Value(mirrors.back().second);
          }
          Value out = kernel.call(Args(moved.data(), moved.size()));
          for (auto& [host, device] : mirrors) host.copy_from(device);
          return out;
        },
        name);
  }

 private:
  Module inner_;
  Device device_;
};

class Conformance : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("conformance seed %u\n", kSeed);
  }
  void SetUp() override {
    if (GetParam() == "vulkan" && vulkan::num_devices() == 0) {
      if (const char* ci = std::getenv("CI"); ci != nullptr && std::string_view(ci) == "true")
        FAIL() << "no Vulkan device under CI=true (scripts/setup.sh installs lavapipe)";
      GTEST_SKIP() << "no Vulkan device on this machine";
    }
    dir_ = fs::temp_directory_path() / ("anvil_conf_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Module build(const std::vector<PrimFunc>& fs, const std::string& options = "") {
    if (std::getenv("ANVIL_TEST_DUMP"))  // debugging aid: the kernels as given
      for (const PrimFunc& f : fs) std::cerr << f << std::endl;
    if (GetParam() == "llvm") return build_llvm(fs, Target::parse("llvm" + options));
    if (GetParam() == "vulkan")
      return Module(make_object<HostMirrorModule>(pipeline::build(fs, Target::parse("vulkan -from_device=0")),
                                                  Device::vulkan(0)));
    Module c = build_c(fs, Target::parse("c" + options));
    std::string path = (dir_ / ("k" + std::to_string(counter_++) + ".so")).string();
    pipeline::export_library(c, path);
    return Module::load_from_file(path);
  }

  fs::path dir_;
  int counter_ = 0;
};

// What the SPIR-V back end does not do yet (codegen/spirv/README.md): those cases skip on vulkan,
// saying so. The CPU targets run every case.
#define ANVIL_NOT_ON_VULKAN_YET(why)                                              \
  do {                                                                            \
    if (GetParam() == "vulkan") GTEST_SKIP() << "vulkan back end: " << (why);    \
  } while (0)
constexpr const char* kNoVectors = "no vector (multi-lane) expressions; vectorized loops run serially per invocation";
constexpr const char* kNoGlobalScratch = "no 'global' scratch allocation inside a kernel (needs a device workspace)";

TEST_P(Conformance, VectorAddAtSeveralSizesFromOneCompilation) {
  Module m = build({vector_add()});
  std::mt19937 rng(kSeed);
  for (int64_t n : {1, 7, 64, 1000, 4099}) {
    Tensor a = random_f32({n}, rng), b = random_f32({n}, rng), c = zeros_f32({n});
    m["vector_add"](a, b, c);
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) want[static_cast<size_t>(i)] = double(f32(a)[i]) + f32(b)[i];
    expect_close(f32(c), want, 1e-6, 0, "vector_add n=" + std::to_string(n));  // exact up to rounding
  }
}

TEST_P(Conformance, BroadcastWithScalarArgument) {
  Module m = build({broadcast_add()});
  std::mt19937 rng(kSeed + 1);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{3, 5}, {17, 33}, {1, 1}}) {
    Tensor a = random_f32({rows, cols}, rng), b = random_f32({cols}, rng), c = zeros_f32({rows, cols});
    m["broadcast_add"](a, b, c, 1.5);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) want.push_back(double(f32(a)[i * cols + j]) * 1.5 + f32(b)[j]);
    expect_close(f32(c), want, 1e-6, 1e-6, "broadcast_add");
  }
}

TEST_P(Conformance, ParallelRowSumOnTwoTasks) {
  Module m = build({row_sum()}, " -num-cores=2");
  std::mt19937 rng(kSeed + 2);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 9}, {2, 100}, {37, 61}}) {
    Tensor a = random_f32({rows, cols}, rng), b = zeros_f32({rows});
    m["row_sum"](a, b);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i) {
      double s = 0;
      for (int64_t j = 0; j < cols; ++j) s += f32(a)[i * cols + j];
      want.push_back(s);
    }
    expect_close(f32(b), want, 1e-5, 1e-5, "row_sum");  // float accumulation over <= 100 terms
  }
}

TEST_P(Conformance, SoftmaxWithKernelScratchBuffer) {
  Module m = build({softmax()});
  std::mt19937 rng(kSeed + 3);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4, 10}, {3, 257}}) {
    Tensor a = random_f32({rows, cols}, rng, -5, 5), b = zeros_f32({rows, cols});
    m["softmax"](a, b);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i) {
      double mx = -1e300, s = 0;
      for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, double(f32(a)[i * cols + j]));
      for (int64_t j = 0; j < cols; ++j) s += std::exp(f32(a)[i * cols + j] - mx);
      for (int64_t j = 0; j < cols; ++j) want.push_back(std::exp(f32(a)[i * cols + j] - mx) / s);
    }
    expect_close(f32(b), want, 1e-5, 1e-7, "softmax");
  }
}

std::vector<double> matmul_ref(Tensor& a, Tensor& b, int64_t n) {
  std::vector<double> want(static_cast<size_t>(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += double(f32(a)[i * n + k]) * f32(b)[k * n + j];
      want[static_cast<size_t>(i * n + j)] = s;
    }
  return want;
}

TEST_P(Conformance, MatmulSplitThatDividesWithUnrolledInnerLoop) {
  Module m = build({matmul64()});
  std::mt19937 rng(kSeed + 4);
  Tensor a = random_f32({64, 64}, rng, -1, 1), b = random_f32({64, 64}, rng, -1, 1), c = zeros_f32({64, 64});
  m["matmul"](a, b, c);
  expect_close(f32(c), matmul_ref(a, b, 64), 1e-4, 1e-5, "matmul");  // 64-term float sums
}

TEST_P(Conformance, MatmulSplitThatDoesNotDivideIsGuarded) {
  Module m = build({matmul_split_guarded()});
  std::mt19937 rng(kSeed + 5);
  for (int64_t n : {1, 8, 13, 30}) {
    Tensor a = random_f32({n, n}, rng, -1, 1), b = random_f32({n, n}, rng, -1, 1), c = zeros_f32({n, n});
    m["matmul_guarded"](a, b, c);
    expect_close(f32(c), matmul_ref(a, b, n), 1e-4, 1e-5, "matmul_guarded n=" + std::to_string(n));
  }
}

TEST_P(Conformance, VectorLoadsStoresAndGathers) {
  ANVIL_NOT_ON_VULKAN_YET(kNoVectors);
  Module m = build({vector_ops()});
  std::mt19937 rng(kSeed + 6);
  for (int64_t n : {8, 64, 800}) {
    Tensor a = random_f32({n}, rng), b = zeros_f32({n});
    m["vector_ops"](a, b);
    std::vector<double> want;
    for (int64_t x = 0; x < n; ++x) want.push_back(double(f32(a)[x]) * 2 + f32(a)[(2 * x) % n]);
    expect_close(f32(b), want, 1e-6, 1e-6, "vector_ops");
  }
}

// Generated code spells floordiv/floormod out (the C back end's prelude, the LLVM lowering); this
// ties both, and the interpreter, to the one definition in base/int_math.h.
TEST_P(Conformance, IntegerDivisionAndCastsMatchTheEvaluator) {
  Module m = build({int_ops()});
  const int32_t as[] = {7, -7, 7, -7, 0, 5, -1, 100};
  const int32_t bs[] = {2, 2, -2, -2, 3, 5, 7, -9};
  const float fs[] = {1.9f, -1.9f, 0.5f, -0.5f, 3.0f, 100.25f, -7.75f, 0.0f};
  Tensor A = Tensor::empty({8}, DataType::int32()), B = Tensor::empty({8}, DataType::int32());
  Tensor F = Tensor::empty({8}, DataType::float32()), O = Tensor::empty({8, 8}, DataType::int32());
  std::memcpy(A.data(), as, sizeof as);
  std::memcpy(B.data(), bs, sizeof bs);
  std::memcpy(F.data(), fs, sizeof fs);
  m["int_ops"](A, B, F, O);
  Tensor O2 = Tensor::empty({8, 8}, DataType::int32());
  tir::run_prim_func(int_ops(), {A.dl(), B.dl(), F.dl(), O2.dl()});  // the reference interpreter agrees
  for (int i = 0; i < 8; ++i) {
    int64_t a = as[i], b = bs[i];
    int64_t want[8] = {floor_div(a, b), floor_mod(a, b), a / b, std::min(a, b), std::max(a, b),
                       a < b ? a * 3 : b - 1, static_cast<int64_t>(fs[i]), static_cast<int64_t>(float(a) * 0.5f)};
    for (int k = 0; k < 8; ++k) {
      EXPECT_EQ(i32(O)[i * 8 + k], want[k]) << "row " << i << " op " << k << " (a=" << a << ", b=" << b << ")";
      EXPECT_EQ(i32(O2)[i * 8 + k], want[k]) << "interpreter row " << i << " op " << k;
    }
  }
}

TEST_P(Conformance, ExpTanhErfSigmoidAccuracyOverARange) {
  ANVIL_NOT_ON_VULKAN_YET(kNoVectors);
  struct Case {
    const char* name;
    ir::CallOp op;
    double (*ref)(double);
    double lo, hi, rtol, atol;
  };
  const Case cases[] = {
      {"exp", ir::CallOp::k_exp, [](double x) { return std::exp(x); }, -87, 88, 2e-6, 0},
      {"tanh", ir::CallOp::k_tanh, [](double x) { return std::tanh(x); }, -10, 10, 2e-6, 1e-7},
      {"erf", ir::CallOp::k_erf, [](double x) { return std::erf(x); }, -5, 5, 1e-6, 1e-6},
      {"sigmoid", ir::CallOp::k_sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }, -30, 30, 2e-6, 1e-7},
  };
  std::vector<PrimFunc> fs;
  for (const Case& c : cases) fs.push_back(math_kernel(c.name, c.op, 16));
  Module m = build(fs);
  const int64_t n = 16 * 1024;
  for (const Case& c : cases) {
    Tensor x = Tensor::empty({n}, DataType::float32()), y = zeros_f32({n});
    for (int64_t i = 0; i < n; ++i) f32(x)[i] = static_cast<float>(c.lo + (c.hi - c.lo) * double(i) / double(n - 1));
    f32(x)[1] = 0.0f;
    f32(x)[2] = 1e-6f;
    f32(x)[3] = -3e-4f;
    m[c.name](x, y);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      double want = c.ref(f32(x)[i]);
      double err = std::abs(f32(y)[i] - want);
      worst = std::max(worst, err / (c.atol + c.rtol * std::abs(want)));
      ASSERT_LE(err, c.atol + c.rtol * std::abs(want)) << c.name << "(" << f32(x)[i] << ") = " << f32(y)[i] << ", want " << want;
    }
    std::printf("%s %s: worst error %.3f of the tolerance\n", GetParam().c_str(), c.name, worst);
  }
}

TEST_P(Conformance, ArgumentCountTypeAndShapeErrorsAreClear) {
  Module m = build({matmul64(), vector_add()});
  std::mt19937 rng(kSeed + 7);
  Tensor a = random_f32({64, 64}, rng), b = random_f32({64, 64}, rng), bad = zeros_f32({64, 32});
  ErrorKind kind{};
  if (GetParam() == "vulkan") {
    // The device module checks against its launch metadata (vulkan_launch_args.cc): the same
    // errors and kinds, in its own words, naming the kernel and the argument.
    auto expect = [&](auto call, ErrorKind want, const std::string& part) {
      std::string msg = error_of(call, &kind);
      EXPECT_EQ(kind, want) << msg;
      EXPECT_NE(msg.find(part), std::string::npos) << msg;
    };
    expect([&] { m["matmul"](a, b, bad); }, ErrorKind::kValue, "'matmul': argument 2 ('C') has shape [64, 32]");
    expect([&] { m["matmul"](a, b); }, ErrorKind::kType, "'matmul' takes 3 arguments but got 2");
    expect([&] { m["matmul"](a, 3, b); }, ErrorKind::kType, "argument 1 ('B') must be a tensor, got int");
    Tensor d = Tensor::empty({64, 64}, DataType::float64());
    expect([&] { m["matmul"](a, b, d); }, ErrorKind::kValue, "argument 2 ('C') has dtype float64, expected float32");
    Tensor r3 = zeros_f32({4, 4, 4});
    expect([&] { m["matmul"](a, r3, b); }, ErrorKind::kValue, "argument 1 ('B') has rank 3");
    Tensor x = zeros_f32({5}), y = zeros_f32({6}), z = zeros_f32({5});
    expect([&] { m["vector_add"](x, y, z); }, ErrorKind::kValue, "argument 1 ('B') dim 0 is 6");
    m["vector_add"](x, z, z);  // still usable after errors
    return;
  }
  EXPECT_EQ(error_of([&] { m["matmul"](a, b, bad); }, &kind),
            "kernel 'matmul' failed: matmul: argument 2 (C) has shape [64, 32] but expected [64, 64]");
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_EQ(error_of([&] { m["matmul"](a, b); }, &kind),
            "kernel 'matmul' failed: matmul: expected 3 arguments (A, B, C) but got 2");
  EXPECT_EQ(kind, ErrorKind::kType);
  EXPECT_EQ(error_of([&] { m["matmul"](a, 3, b); }, &kind),
            "kernel 'matmul' failed: matmul: argument 1 (B) must be a tensor but got int");
  EXPECT_EQ(kind, ErrorKind::kType);
  Tensor d = Tensor::empty({64, 64}, DataType::float64());
  EXPECT_EQ(error_of([&] { m["matmul"](a, b, d); }, &kind),
            "kernel 'matmul' failed: matmul: argument 2 (C) has dtype float64 but expected float32");
  Tensor r3 = zeros_f32({4, 4, 4});
  EXPECT_EQ(error_of([&] { m["matmul"](a, r3, b); }),
            "kernel 'matmul' failed: matmul: argument 1 (B) has 3 dimensions but expected 2");
  // Symbolic n bound from A, then checked against B.
  Tensor x = zeros_f32({5}), y = zeros_f32({6}), z = zeros_f32({5});
  EXPECT_EQ(error_of([&] { m["vector_add"](x, y, z); }),
            "kernel 'vector_add' failed: vector_add: argument 1 (B) has shape [6] but expected [5]");
  m["vector_add"](x, z, z);  // still usable after errors
}

TEST_P(Conformance, ParallelLoopWithSymbolicExtentOnTwoTasks) {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A"), B = decl_buffer({n}, DataType::float32(), "B");
  Stmt body = make_for(i, 3, n - 3, tir::buffer_store(B, buffer_load(A, {i}) * 2.0, {i}), ForKind::kParallel);
  Module m = build({make_prim_func("scale", {A, B}, body)}, " -num-cores=2");
  std::mt19937 rng(kSeed + 8);
  for (int64_t len : {6, 7, 1001}) {
    Tensor a = random_f32({len}, rng), b = zeros_f32({len});
    m["scale"](a, b);
    for (int64_t x = 0; x < len; ++x)
      ASSERT_EQ(f32(b)[x], x >= 3 && x < len ? f32(a)[x] * 2 : 0.0f) << "at " << x << " of " << len;
  }
}

TEST_P(Conformance, LargeSymbolicAllocationUsesTheWorkspace) {
  ANVIL_NOT_ON_VULKAN_YET(kNoGlobalScratch);
  // tmp[n] holds A * 3, then B = tmp + 1 (n symbolic: workspace allocation).
  Var n = ir::size_var("n"), i("i"), j("j");
  Buffer A = decl_buffer({n}, DataType::float32(), "A"), B = decl_buffer({n}, DataType::float32(), "B");
  Buffer T = decl_buffer({n}, DataType::float32(), "T");
  Stmt body = tir::allocate(T->data(), DataType::float32(), {n}, "global",
                            tir::seq({make_for(i, 0, n, tir::buffer_store(T, buffer_load(A, {i}) * 3.0, {i})),
                                      make_for(j, 0, n, tir::buffer_store(B, buffer_load(T, {j}) + 1.0, {j}))}));
  Module m = build({make_prim_func("tmp", {A, B}, body)});
  std::mt19937 rng(kSeed + 9);
  Tensor a = random_f32({100000}, rng), b = zeros_f32({100000});
  m["tmp"](a, b);
  for (int64_t x = 0; x < 100000; ++x) ASSERT_FLOAT_EQ(f32(b)[x], f32(a)[x] * 3 + 1) << x;
}


// ---- TE-built kernels (te::lower), compiled for both targets ---------------------------------

TEST_P(Conformance, TeElementwiseAddWithSymbolicShape) {
  Var n = ir::size_var("n");
  te::Tensor A = te::placeholder({n}, DataType::float32(), "A"), B = te::placeholder({n}, DataType::float32(), "B");
  te::Tensor C = te::compute({n}, [&](Var i) { return A(i) + B(i); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [xo, xi] = s[C].split(C.axis(0), 8);
  s[C].parallel(xo);
  s[C].vectorize(xi);
  Module m = build({te::lower(s, {A, B, C}, "te_add")}, " -num-cores=2");
  std::mt19937 rng(kSeed + 20);
  for (int64_t len : {1, 8, 13, 1000}) {
    Tensor a = random_f32({len}, rng), b = random_f32({len}, rng), c = zeros_f32({len});
    m["te_add"](a, b, c);
    std::vector<double> want;
    for (int64_t x = 0; x < len; ++x) want.push_back(double(f32(a)[x]) + f32(b)[x]);
    expect_close(f32(c), want, 1e-6, 0, "te_add n=" + std::to_string(len));
  }
}

TEST_P(Conformance, TeBroadcastAndRowSum) {
  ANVIL_NOT_ON_VULKAN_YET(kNoGlobalScratch);
  Var m = ir::size_var("m"), n = ir::size_var("n");
  te::Tensor A = te::placeholder({m, n}, DataType::float32(), "A"), b = te::placeholder({n}, DataType::float32(), "b");
  te::Tensor C = te::compute({m, n}, [&](Var i, Var j) { return A(i, j) * b(j); }, "C");
  te::IterVar k = te::reduce_axis(0, n, "k");
  te::Tensor S = te::compute({m}, [&](Var i) { return te::sum(C(i, k), {k}); }, "S");
  te::Schedule s = te::create_schedule({S});
  Module mod = build({te::lower(s, {A, b, S}, "te_rowsum")});
  std::mt19937 rng(kSeed + 21);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {5, 7}, {33, 100}}) {
    Tensor a = random_f32({rows, cols}, rng), bb = random_f32({cols}, rng), out = zeros_f32({rows});
    mod["te_rowsum"](a, bb, out);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i) {
      double acc = 0;
      for (int64_t j = 0; j < cols; ++j) acc += double(f32(a)[i * cols + j]) * f32(bb)[j];
      want.push_back(acc);
    }
    expect_close(f32(out), want, 1e-5, 1e-5, "te_rowsum");
  }
}

TEST_P(Conformance, TeSoftmaxWithIntermediateTensors) {
  ANVIL_NOT_ON_VULKAN_YET(kNoGlobalScratch);
  Var m = ir::size_var("m"), n = ir::size_var("n");  // intermediates of symbolic size: workspace
  te::Tensor A = te::placeholder({m, n}, DataType::float32(), "A");
  te::IterVar k1 = te::reduce_axis(0, n, "k1"), k2 = te::reduce_axis(0, n, "k2");
  te::Tensor M = te::compute({m}, [&](Var i) { return te::max(A(i, k1), {k1}); }, "M");
  te::Tensor E = te::compute({m, n}, [&](Var i, Var j) { return ir::exp(A(i, j) - M(i)); }, "E");
  te::Tensor S = te::compute({m}, [&](Var i) { return te::sum(E(i, k2), {k2}); }, "S");
  te::Tensor B = te::compute({m, n}, [&](Var i, Var j) { return E(i, j) / S(i); }, "B");
  te::Schedule s = te::create_schedule({B});
  Module mod = build({te::lower(s, {A, B}, "te_softmax")});
  std::mt19937 rng(kSeed + 22);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{2, 3}, {16, 300}, {1, 1}}) {
    Tensor a = random_f32({rows, cols}, rng, -6, 6), b = zeros_f32({rows, cols});
    mod["te_softmax"](a, b);
    std::vector<double> want;
    for (int64_t i = 0; i < rows; ++i) {
      double mx = -1e300, sum = 0;
      for (int64_t j = 0; j < cols; ++j) mx = std::max(mx, double(f32(a)[i * cols + j]));
      for (int64_t j = 0; j < cols; ++j) sum += std::exp(f32(a)[i * cols + j] - mx);
      for (int64_t j = 0; j < cols; ++j) want.push_back(std::exp(f32(a)[i * cols + j] - mx) / sum);
    }
    expect_close(f32(b), want, 1e-5, 1e-7, "te_softmax");
  }
}

// Matmul with the j axis split by `factor` (8 divides 64, 7 and 5 do not), outer rows parallel.
PrimFunc te_matmul(int64_t size, int factor, const std::string& name) {
  te::Tensor A = te::placeholder({int(size), int(size)}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({int(size), int(size)}, DataType::float32(), "B");
  te::IterVar k = te::reduce_axis(0, int(size), "k");
  te::Tensor C = te::compute({int(size), int(size)}, [&](Var i, Var j) { return te::sum(A(i, k) * B(k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  auto [jo, ji] = s[C].split(C.axis(1), factor);
  s[C].reorder(C.axis(0), jo, k, ji);
  s[C].parallel(C.axis(0));
  s[C].unroll(ji);
  return te::lower(s, {A, B, C}, name);
}

TEST_P(Conformance, TeMatmulSplitsThatDivideAndDoNot) {
  Module m = build({te_matmul(64, 8, "mm8"), te_matmul(64, 7, "mm7"), te_matmul(30, 4, "mm4")}, " -num-cores=2");
  std::mt19937 rng(kSeed + 23);
  for (auto [name, size] : {std::pair<const char*, int64_t>{"mm8", 64}, {"mm7", 64}, {"mm4", 30}}) {
    Tensor a = random_f32({size, size}, rng, -1, 1), b = random_f32({size, size}, rng, -1, 1), c = zeros_f32({size, size});
    m[name](a, b, c);
    expect_close(f32(c), matmul_ref(a, b, size), 1e-4, 1e-5, name);
  }
}

TEST_P(Conformance, OversizedAllocationIsAnErrorNotACrash) {
  ANVIL_NOT_ON_VULKAN_YET(kNoGlobalScratch);
  Var n("n", DataType::int64()), i("i", DataType::int64());
  Buffer O = decl_buffer({1}, DataType::float32(), "O");
  Buffer T = decl_buffer({n, n}, DataType::float32(), "T");
  Stmt body = tir::allocate(T->data(), DataType::float32(), {n, n}, "global",
                            tir::seq({tir::buffer_store(T, 1.0, {ir::int_imm(0, DataType::int64()), ir::int_imm(0, DataType::int64())}),
                                      tir::buffer_store(O, buffer_load(T, {ir::int_imm(0, DataType::int64()), ir::int_imm(0, DataType::int64())}), {0})}));
  Module m = build({make_prim_func("big", {O, n}, body)});
  Tensor o = zeros_f32({1});
  m["big"](o, int64_t{4});
  EXPECT_EQ(f32(o)[0], 1.0f);
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m["big"](o, int64_t{1} << 31); }, &kind),
            "kernel 'big' failed: big: allocation T_data has a negative or too large size");
  EXPECT_EQ(kind, ErrorKind::kValue);
}

TEST_P(Conformance, StridedViewsAndByteOffsets) {
  ANVIL_NOT_ON_VULKAN_YET("tensors with explicit strides (the runtime binds compact buffers)");
  // Memory of a 4 x 3 row-major matrix, viewed transposed (shape [3, 4], strides [1, 3]).
  auto mem = std::shared_ptr<float[]>(new float[16]);
  for (int x = 0; x < 16; ++x) mem[x] = float(x);
  std::vector<int64_t> shape_t = {3, 4}, strides_t = {1, 3};
  Tensor view = Tensor::wrap(mem.get(), shape_t, DataType::float32(), Device::cpu(), mem, strides_t);
  // A compact kernel refuses it ...
  Var i("i"), j("j");
  Buffer A = decl_buffer({3, 4}, DataType::float32(), "A"), B = decl_buffer({3, 4}, DataType::float32(), "B");
  PrimFunc compact = make_prim_func("copy", {A, B}, make_for(i, 0, 3, make_for(j, 0, 4, tir::buffer_store(B, buffer_load(A, {i, j}), {i, j}))));
  // ... a kernel whose buffer has symbolic strides and offset takes it.
  Var s0 = ir::size_var("s0"), s1 = ir::size_var("s1"), off = ir::size_var("off");
  Buffer S = Buffer::make(Var("S_data", ir::handle_type()), DataType::float32(), {3, 4}, {s0, s1}, off, "S", 4, "global");
  Buffer D = decl_buffer({3, 4}, DataType::float32(), "D");
  PrimFunc strided = make_prim_func("copy_strided", {S, D},
                                    make_for(i, 0, 3, make_for(j, 0, 4, tir::buffer_store(D, buffer_load(S, {i, j}), {i, j}))));
  Module m = build({compact, strided});
  Tensor out = zeros_f32({3, 4});
  EXPECT_EQ(error_of([&] { m["copy"](view, out); }),
            "kernel 'copy' failed: copy: argument 0 (A) has strides [1, 3] but expected [4, 1] (compact)");
  m["copy_strided"](view, out);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 4; ++c) EXPECT_EQ(f32(out)[r * 4 + c], float(c * 3 + r)) << r << "," << c;
  // A compact view that starts 4 elements in (byte_offset 16): the compact kernel honours it,
  // the offset var of the strided one is bound from it.
  std::vector<int64_t> shape_c = {3, 4};
  Tensor shifted = Tensor::wrap(mem.get(), shape_c, DataType::float32(), Device::cpu(), mem, {}, 16);
  Tensor out2 = zeros_f32({3, 4}), out3 = zeros_f32({3, 4});
  m["copy"](shifted, out2);
  m["copy_strided"](shifted, out3);
  for (int x = 0; x < 12; ++x) {
    EXPECT_EQ(f32(out2)[x], float(x + 4)) << x;
    EXPECT_EQ(f32(out3)[x], float(x + 4)) << x;
  }
}

TEST_P(Conformance, AwkwardNamesDoNotCollide) {
  // Two different loop vars both named "i", vars named like C keywords and generated helpers.
  Var n = ir::size_var("args"), outer("i"), inner("i"), kw("int"), helper("i_end");
  Buffer A = decl_buffer({n, 3}, DataType::float32(), "ret"), B = decl_buffer({n, 3}, DataType::float32(), "c_");
  Stmt body = make_for(outer, 0, n,
                       make_for(inner, 0, 3,
                                tir::let_stmt(kw, outer * 3 + inner,
                                              tir::let_stmt(helper, kw + 1,
                                                            tir::buffer_store(B, buffer_load(A, {outer, inner}) +
                                                                                     ir::cast(DataType::float32(), helper),
                                                                              {outer, inner})))));
  Module m = build({make_prim_func("names", {A, B}, body)});
  std::mt19937 rng(kSeed + 30);
  Tensor a = random_f32({5, 3}, rng), b = zeros_f32({5, 3});
  m["names"](a, b);
  for (int x = 0; x < 15; ++x) ASSERT_EQ(f32(b)[x], f32(a)[x] + float(x + 1)) << x;
}

TEST_P(Conformance, MathSpecialValues) {
  ANVIL_NOT_ON_VULKAN_YET(kNoVectors);
  std::vector<PrimFunc> fs = {math_kernel("exp", ir::CallOp::k_exp, 8), math_kernel("tanh", ir::CallOp::k_tanh, 8),
                              math_kernel("erf", ir::CallOp::k_erf, 8), math_kernel("sigmoid", ir::CallOp::k_sigmoid, 8)};
  Module m = build(fs);
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const float xs[8] = {inf, -inf, nan, 0.0f, -0.0f, 88.5f, -100.0f, 200.0f};
  for (const char* name : {"exp", "tanh", "erf", "sigmoid"}) {
    Tensor x = Tensor::empty({8}, DataType::float32()), y = zeros_f32({8});
    std::memcpy(x.data(), xs, sizeof xs);
    m[name](x, y);
    for (int k = 0; k < 8; ++k) {
      double want = std::string(name) == "exp"    ? std::exp(double(xs[k]))
                    : std::string(name) == "tanh" ? std::tanh(double(xs[k]))
                    : std::string(name) == "erf"  ? std::erf(double(xs[k]))
                                                  : 1 / (1 + std::exp(-double(xs[k])));
      float got = f32(y)[k];
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << name << "(" << xs[k] << ") = " << got;
      } else if (std::isinf(float(want))) {
        EXPECT_EQ(got, float(want)) << name << "(" << xs[k] << ")";
      } else {
        EXPECT_NEAR(got, want, 2e-6 * std::abs(want) + 1e-38) << name << "(" << xs[k] << ")";
      }
    }
  }
}

TEST_P(Conformance, VectorStoreReadsBeforeItWrites) {
  ANVIL_NOT_ON_VULKAN_YET(kNoVectors);
  // A[0..7] = reverse(A[0..7]): every lane reads an element another lane overwrites.
  Buffer A = decl_buffer({8}, DataType::float32(), "A");
  Stmt body = tir::buffer_store(A, buffer_load(A, {ir::ramp(7, -1, 8)}), {ir::ramp(0, 1, 8)});
  Module m = build({make_prim_func("reverse", {A}, body)});
  Tensor a = Tensor::empty({8}, DataType::float32());
  for (int x = 0; x < 8; ++x) f32(a)[x] = float(x);
  m["reverse"](a);
  for (int x = 0; x < 8; ++x) EXPECT_EQ(f32(a)[x], float(7 - x)) << x;
}

INSTANTIATE_TEST_SUITE_P(Targets, Conformance, ::testing::Values("llvm", "c", "vulkan"),
                         [](const auto& info) { return info.param; });

// ---- target-specific checks ----------------------------------------------------------------

class CodegenLLVM : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    dir_ = fs::temp_directory_path() / ("anvil_cg_llvm_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CodegenLLVM, MathStaysVectorNoScalarLibmCalls) {
  Module m = build_llvm({math_kernel("exp16", ir::CallOp::k_exp, 16), math_kernel("tanh8", ir::CallOp::k_tanh, 8),
                         math_kernel("erf16", ir::CallOp::k_erf, 16)},
                        Target::parse("llvm"));
  std::string ll = llvm_module_source(m, "ll");
  EXPECT_NE(ll.find("<16 x float>"), std::string::npos);
  EXPECT_NE(ll.find("<8 x float>"), std::string::npos);
  for (const char* f : {"@expf", "@tanhf", "@erff", "@llvm.exp.", "@exp(", "@tanh(", "@erf("})
    EXPECT_EQ(ll.find(f), std::string::npos) << "scalar math call " << f << " in\n" << ll;
}

TEST_F(CodegenLLVM, ExportedTirKernelLoadsAndRuns) {
  Module m = build_llvm({vector_add()}, Target::parse("llvm"));
  std::string path = (dir_ / "add.so").string();
  pipeline::export_library(m, path);
  Module lib = Module::load_from_file(path);
  std::mt19937 rng(kSeed + 10);
  Tensor a = random_f32({333}, rng), b = random_f32({333}, rng), c = zeros_f32({333});
  lib["vector_add"](a, b, c);
  for (int i = 0; i < 333; ++i) ASSERT_EQ(f32(c)[i], f32(a)[i] + f32(b)[i]);
  EXPECT_THROW(lib["vector_add"](a, b), Error);
}

TEST_F(CodegenLLVM, AArch64ObjectFromTir) {
  Module m = build_llvm({vector_add(), softmax()}, Target::parse("llvm -mtriple=aarch64-linux-gnu"));
  const std::string& object = llvm_module_object(m);
  ASSERT_GT(object.size(), 64u);
  EXPECT_EQ(object.substr(0, 4), "\x7f" "ELF");
  uint16_t machine = 0;
  std::memcpy(&machine, object.data() + 18, 2);
  EXPECT_EQ(machine, 183);  // EM_AARCH64
}

TEST_F(CodegenLLVM, FastMathFlagsOnlyWithTheOption) {
  Module plain = build_llvm({vector_add()}, Target::parse("llvm -opt-level=0"));
  Module fast = build_llvm({vector_add()}, Target::parse("llvm -opt-level=0 -fast-math"));
  EXPECT_EQ(llvm_module_source(plain, "ll").find("fadd fast"), std::string::npos);
  EXPECT_NE(llvm_module_source(fast, "ll").find("fadd fast"), std::string::npos);
}

TEST_F(CodegenLLVM, CorruptedLibraryGivesTheLoadersError) {
  Module m = build_llvm({vector_add()}, Target::parse("llvm"));
  std::string path = (dir_ / "bad.so").string();
  pipeline::export_library(m, path);
  fs::resize_file(path, fs::file_size(path) / 3);  // truncated
  try {
    Module::load_from_file(path);
    FAIL() << "loaded a truncated library";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIO) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

// float16 through the LLVM back end agrees bit for bit with the reference interpreter (which
// rounds after every operation, like LLVM's half arithmetic): scalar loops of a * b, a + b,
// a - b, a / b and a cast to float32 and back, 8-lane loops of a * b and a + b, on random bit
// patterns (NaN, inf and subnormals included; NaNs compared as NaN, not by payload) and on random
// values in [-4, 4). a * b + a is the exception: the LLVM target allows FP op fusion
// (llvm_target.cc: AllowFPOpFusion = Fast), so it becomes one fma rounded once; it must equal
// the interpreter or the fused result.
TEST_F(CodegenLLVM, Float16ArithmeticMatchesTheInterpreterBitExactly) {
  Var n = ir::size_var("n"), i("i");
  DataType h = DataType::float16();
  Buffer A = decl_buffer({n}, h, "A"), B = decl_buffer({n}, h, "B");
  Buffer O = decl_buffer({6, n}, h, "O"), V = decl_buffer({2, n}, h, "V");
  PrimExpr a = buffer_load(A, {i}), b = buffer_load(B, {i});
  Stmt scalar = make_for(
      i, 0, n,
      tir::seq({tir::buffer_store(O, a * b, {0, i}), tir::buffer_store(O, a + b, {1, i}),
                tir::buffer_store(O, a - b, {2, i}), tir::buffer_store(O, a / b, {3, i}),
                tir::buffer_store(O, ir::cast(h, ir::cast(DataType::float32(), a) * 0.1f), {4, i})}));
  // Its own kernel, so a * b is not shared with the store above.
  Stmt fused_body = make_for(i, 0, n, tir::buffer_store(O, a * b + a, {5, i}));
  PrimExpr lanes = ir::ramp(i * 8, 1, 8);
  PrimExpr va = buffer_load(A, {lanes}), vb = buffer_load(B, {lanes});
  Stmt vector = make_for(i, 0, ir::floordiv(n, 8),
                         tir::seq({tir::buffer_store(V, va * vb, {0, lanes}), tir::buffer_store(V, va + vb, {1, lanes})}));
  PrimFunc fs = make_prim_func("f16_scalar", {A, B, O}, scalar), fv = make_prim_func("f16_vector", {A, B, V}, vector);
  PrimFunc ff = make_prim_func("f16_fma", {A, B, O}, fused_body);
  Module m = build_llvm({fs, fv, ff}, Target::parse("llvm"));

  auto bits = [](Tensor& t) { return static_cast<uint16_t*>(t.data()); };
  auto same = [](uint16_t x, uint16_t y) {
    bool nx = (x & 0x7c00) == 0x7c00 && (x & 0x3ff), ny = (y & 0x7c00) == 0x7c00 && (y & 0x3ff);
    return nx || ny ? nx == ny : x == y;
  };
  std::mt19937 rng(kSeed + 16);
  std::uniform_real_distribution<double> dist(-4, 4);
  const int64_t len = 4096;
  for (bool values : {false, true}) {
    Tensor ta = Tensor::empty({len}, h), tb = Tensor::empty({len}, h);
    for (int64_t k = 0; k < len; ++k) {
      bits(ta)[k] = values ? ir::double_to_half_bits(dist(rng)) : static_cast<uint16_t>(rng());
      bits(tb)[k] = values ? ir::double_to_half_bits(dist(rng)) : static_cast<uint16_t>(rng());
    }
    Tensor got = Tensor::empty({6, len}, h), want = Tensor::empty({6, len}, h);
    Tensor got_v = Tensor::empty({2, len}, h), want_v = Tensor::empty({2, len}, h);
    m["f16_scalar"](ta, tb, got);
    m["f16_fma"](ta, tb, got);
    m["f16_vector"](ta, tb, got_v);
    tir::run_prim_func(fs, {ta.dl(), tb.dl(), want.dl()});
    tir::run_prim_func(ff, {ta.dl(), tb.dl(), want.dl()});
    tir::run_prim_func(fv, {ta.dl(), tb.dl(), want_v.dl()});
    int bad = 0, fused = 0;
    for (int64_t k = 0; k < 6 * len; ++k) {
      uint16_t g = bits(got)[k], w = bits(want)[k], x = bits(ta)[k % len], y = bits(tb)[k % len];
      if (same(g, w)) continue;
      if (k / len == 5) {
        double ha = ir::half_bits_to_double(x), hb = ir::half_bits_to_double(y);
        if (same(g, ir::double_to_half_bits(std::fma(ha, hb, ha)))) {
          ++fused;
          continue;
        }
      }
      if (++bad <= 10)
        ADD_FAILURE() << "output " << k / len << " element " << k % len << ": llvm " << std::hex << g
                      << ", interpreter " << w << " (a " << x << ", b " << y << ")";
    }
    for (int64_t k = 0; k < 2 * len; ++k)
      if (!same(bits(got_v)[k], bits(want_v)[k]) && ++bad <= 10)
        ADD_FAILURE() << "vector output " << k / len << " element " << k % len << ": llvm " << std::hex
                      << bits(got_v)[k] << ", interpreter " << bits(want_v)[k];
    EXPECT_EQ(bad, 0) << (values ? "random values" : "random bit patterns");
    std::printf("float16 a * b + a: %d of %lld fused (%s)\n", fused, static_cast<long long>(len),
                values ? "random values" : "random bit patterns");
  }
}

TEST(CodegenC, SourceFollowsTheKernelAbi) {
  std::vector<std::string> names;
  std::string src = generate_c_source({vector_add(), row_sum()}, &names);
  EXPECT_EQ(names, (std::vector<std::string>{"vector_add", "row_sum"}));
  EXPECT_NE(src.find("int32_t __anvil_fn_vector_add(const AnvilValue* args, int32_t num_args, AnvilValue* ret)"), std::string::npos);
  EXPECT_NE(src.find("parallel_launch"), std::string::npos);
  EXPECT_THROW(build_c({vector_add()}, Target::parse("llvm")), Error);
}

}  // namespace
}  // namespace anvil::codegen
