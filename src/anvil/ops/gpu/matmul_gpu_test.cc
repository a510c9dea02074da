// The gpu rows of nn.dense and matmul (ops/gpu/matmul_gpu.cc: shared-memory tiles, 4x4
// register blocks) lowered through lower_call for target "vulkan", built by pipeline::build and
// run on the first Vulkan device (lavapipe in CI) on fresh random inputs (fixed, printed seed)
// against float64 products: shapes that divide the 64x64 tiles and shapes that do not, few
// rows (a batch-1/8 dense layer), a symbolic M, batch dims. Skipped, saying why, without a
// Vulkan device (a failure under CI=true).
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "anvil/ops/op_test_util.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/registry.h"

namespace anvil::ops {
namespace {

using graph::Type;
using ir::DataType;
using testing::numel;
using testing::random_values;

constexpr uint32_t kSeed = 20261207;

Type tt(const std::vector<int64_t>& shape, DataType dtype) { return Type::tensor(shape, dtype); }

class GpuMatmul : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    ANVIL_SKIP_WITHOUT_VULKAN();
    std::cout << "[ seed ] " << kSeed << "\n";
  }

  struct Kernel {
    Module module;
    LoweredCall lowered;
  };

  Kernel build(const std::string& op, const std::vector<Type>& types) {
    graph::BlockBuilder b;
    std::vector<graph::Expr> args;
    for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
    graph::Expr call = b.call(op, args, {});
    Kernel k;
    Target t = Target::parse("vulkan");
    k.lowered = lower_call(*call.as<graph::CallNode>(), t, "kernel");
    EXPECT_NE(k.lowered.implementation.find(".gpu"), std::string::npos) << k.lowered.implementation;
    k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, t);
    return k;
  }

  std::vector<double> run(Kernel& k, const std::vector<Tensor>& inputs, const std::vector<int64_t>& out_shape,
                          const std::map<std::string, int64_t>& dims = {}) {
    Device dev = Device::vulkan(0);
    std::vector<Value> args;
    for (const Tensor& t : inputs) {
      Tensor d = Tensor::empty(t.shape(), t.dtype(), dev);
      d.copy_from_bytes(t.data(), t.nbytes());
      args.emplace_back(d);
    }
    Tensor out = Tensor::empty(std::span<const int64_t>(out_shape), DataType::float32(), dev);
    args.emplace_back(out);
    for (const ir::Var& v : k.lowered.shape_vars) {
      auto it = dims.find(v->name());
      if (it == dims.end()) ADD_FAILURE() << "no value for shape var " << v->name();
      args.emplace_back(static_cast<int32_t>(it == dims.end() ? 0 : it->second));
    }
    k.module["kernel"].call(Args(args.data(), args.size()));
    DeviceAPI::get(dev)->sync(dev, nullptr);
    Tensor h = Tensor::empty(out.shape(), out.dtype());
    out.copy_to_bytes(h.data(), h.nbytes());
    return testing::values_of(h);
  }

  // want[b, i, j] = sum_k a[b, i, k] * (dense ? w[j, k] : w[b?, k, j]); b_batched: B has the batch.
  static std::vector<double> reference(const std::vector<double>& a, const std::vector<double>& w, int64_t batch,
                                       int64_t m, int64_t n, int64_t k, bool dense, bool b_batched) {
    std::vector<double> want(static_cast<size_t>(batch * m * n), 0.0);
    for (int64_t bb = 0; bb < batch; ++bb)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          const int64_t wb = b_batched ? bb * k * n : 0;
          for (int64_t p = 0; p < k; ++p)
            s += a[static_cast<size_t>((bb * m + i) * k + p)] *
                 w[static_cast<size_t>(dense ? j * k + p : wb + p * n + j)];
          want[static_cast<size_t>((bb * m + i) * n + j)] = s;
        }
    return want;
  }

  static void expect_near(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-4 * (1 + std::fabs(want[i]))) << what << " at " << i;
  }

  std::mt19937 rng{kSeed};
};

TEST_F(GpuMatmul, MatmulOverShapesThatDoAndDoNotDivideTheTiles) {
  DataType f = DataType::float32();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 64}, {127, 65, 33}, {128, 192, 256}, {256, 300, 70}, {1, 70, 17},
                         {5, 3, 100}}) {
    const std::string what = "matmul " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    auto a = random_values(m * k, rng, -1, 1), b = random_values(k * n, rng, -1, 1);
    Kernel kr = build("matmul", {tt({m, k}, f), tt({k, n}, f)});
    auto out = run(kr, {testing::make_tensor({m, k}, f, a), testing::make_tensor({k, n}, f, b)}, {m, n});
    expect_near(out, reference(a, b, 1, m, n, k, false, false), what);
  }
}

TEST_F(GpuMatmul, DenseWithFewRowsAndNonDividingShapes) {
  DataType f = DataType::float32();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 384, 1536}, {8, 1536, 384}, {3, 100, 37}, {70, 33, 129}}) {
    const std::string what = "dense " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
    auto x = random_values(m * k, rng, -1, 1), w = random_values(n * k, rng, -1, 1);
    Kernel kr = build("nn.dense", {tt({m, k}, f), tt({n, k}, f)});
    auto out = run(kr, {testing::make_tensor({m, k}, f, x), testing::make_tensor({n, k}, f, w)}, {m, n});
    expect_near(out, reference(x, w, 1, m, n, k, true, false), what);
  }
}

TEST_F(GpuMatmul, SymbolicRowsOneKernelForEveryBatch) {
  DataType f = DataType::float32();
  ir::Var mv = ir::size_var("m");
  const int64_t n = 96, k = 80;
  Kernel dense = build("nn.dense", {Type::tensor(std::vector<ir::PrimExpr>{mv, ir::int_imm(k)}, f), tt({n, k}, f)});
  Kernel mm = build("matmul", {Type::tensor(std::vector<ir::PrimExpr>{mv, ir::int_imm(k)}, f), tt({k, n}, f)});
  for (int64_t m : {1, 8, 64, 100}) {
    auto x = random_values(m * k, rng, -1, 1), w = random_values(n * k, rng, -1, 1);
    auto out = run(dense, {testing::make_tensor({m, k}, f, x), testing::make_tensor({n, k}, f, w)}, {m, n}, {{"m", m}});
    expect_near(out, reference(x, w, 1, m, n, k, true, false), "dense m=" + std::to_string(m));
    auto out2 = run(mm, {testing::make_tensor({m, k}, f, x), testing::make_tensor({k, n}, f, w)}, {m, n}, {{"m", m}});
    expect_near(out2, reference(x, w, 1, m, n, k, false, false), "matmul m=" + std::to_string(m));
  }
}

TEST_F(GpuMatmul, BatchedMatmulAndBroadcastWeight) {
  DataType f = DataType::float32();
  const int64_t batch = 3, m = 37, n = 70, k = 45;
  auto a = random_values(batch * m * k, rng, -1, 1), b = random_values(batch * k * n, rng, -1, 1);
  Kernel kr = build("matmul", {tt({batch, m, k}, f), tt({batch, k, n}, f)});
  auto out = run(kr, {testing::make_tensor({batch, m, k}, f, a), testing::make_tensor({batch, k, n}, f, b)}, {batch, m, n});
  expect_near(out, reference(a, b, batch, m, n, k, false, true), "batched matmul");
  auto w = random_values(n * k, rng, -1, 1);
  Kernel dn = build("nn.dense", {tt({batch, m, k}, f), tt({n, k}, f)});
  auto out2 = run(dn, {testing::make_tensor({batch, m, k}, f, a), testing::make_tensor({n, k}, f, w)}, {batch, m, n});
  expect_near(out2, reference(a, w, batch, m, n, k, true, false), "dense of 3-d data");
}

}  // namespace
}  // namespace anvil::ops
