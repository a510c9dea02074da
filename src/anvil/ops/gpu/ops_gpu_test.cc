// The gpu family's elementwise, transform, reduction and row-wise rows (ops/gpu/strategies_gpu.cc) end to end: graph calls lowered through
// lower_call for target "vulkan", built by pipeline::build, run on the first Vulkan device
// (lavapipe in CI) on fresh random inputs (fixed, printed seed) against float64 references.
// Shapes that do and do not divide the thread count, symbolic dims, an output larger than one
// grid axis. Skipped, saying why, without a Vulkan device (a failure under CI=true).
#include <algorithm>
#include <cmath>

#include "anvil/ops/gpu/gpu_op_test_util.h"

namespace anvil::ops {
namespace {

using gpu_testing::GpuOps;

using graph::AttrValue;
using graph::Attrs;
using graph::Type;
using ir::DataType;
using testing::numel;
using testing::random_values;


TEST_F(GpuOps, BroadcastBinaryOverShapesThatDoAndDoNotDivideTheThreads) {
  DataType f = DataType::float32();
  for (std::vector<int64_t> rows : {std::vector<int64_t>{4, 32}, {3, 37}, {1, 1}, {7, 300}}) {
    std::vector<int64_t> bshape = {rows[1]};
    auto a = random_values(numel(rows), rng, -2, 2), b = random_values(rows[1], rng, -2, 2);
    GpuKernel k = build("multiply", {Type::tensor(rows, f), Type::tensor(bshape, f)});
    auto out = run(k, {testing::make_tensor(rows, f, a), testing::make_tensor(bshape, f, b)}, {rows});
    std::vector<double> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = a[i] * b[i % static_cast<size_t>(rows[1])];
    expect_near(out[0], want, 1e-6, "multiply");
  }
}

TEST_F(GpuOps, UnaryWithASymbolicBatch) {
  ir::Var n = ir::size_var("n");
  DataType f = DataType::float32();
  GpuKernel k = build("sigmoid", {Type::tensor({n, ir::int_imm(7)}, f)});
  for (int64_t nv : {1, 5, 300}) {
    std::vector<int64_t> shape = {nv, 7};
    auto a = random_values(numel(shape), rng, -4, 4);
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {shape}, {{"n", nv}});
    std::vector<double> want(a.size());
    for (size_t i = 0; i < a.size(); ++i) want[i] = 1 / (1 + std::exp(-a[i]));
    expect_near(out[0], want, 1e-5, "sigmoid n=" + std::to_string(nv));
  }
}

TEST_F(GpuOps, TransposeAndInt32Cast) {
  DataType f = DataType::float32();
  std::vector<int64_t> shape = {5, 7, 3};
  auto a = random_values(numel(shape), rng, -100, 100);
  GpuKernel k = build("transpose", {Type::tensor(shape, f)}, {{"axes", AttrValue::ints({2, 0, 1})}});
  auto out = run(k, {testing::make_tensor(shape, f, a)}, {{3, 5, 7}});
  std::vector<double> want;
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 7; ++j) want.push_back(a[static_cast<size_t>((i * 7 + j) * 3 + c)]);
  expect_near(out[0], want, 1e-7, "transpose");
}

TEST_F(GpuOps, OutputLargerThanOneGridAxisUsesBlockIdxY) {
  DataType f = DataType::float32();
  const int64_t n = 65535 * 128 + 77;  // more workgroups of 128 than maxComputeWorkGroupCount[0] allows
  std::vector<int64_t> shape = {n};
  auto a = random_values(n, rng, -2, 2);
  GpuKernel k = build("relu", {Type::tensor(shape, f)});
  auto out = run(k, {testing::make_tensor(shape, f, a)}, {shape});
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(out[0][static_cast<size_t>(i)], static_cast<double>(static_cast<float>(std::max(a[i], 0.0)))) << i;
}

TEST_F(GpuOps, SumMeanArgmaxOverAxes) {
  DataType f = DataType::float32();
  ir::Var n = ir::size_var("n");
  std::vector<int64_t> shape = {5, 37};
  auto a = random_values(numel(shape), rng, -1, 1);
  Type t = Type::tensor({ir::int_imm(5), n}, f);
  for (const char* op : {"sum", "mean", "max"}) {
    GpuKernel k = build(op, {t}, {{"axes", AttrValue::ints({1})}, {"keepdims", 0}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {{5}}, {{"n", 37}});
    std::vector<double> want(5);
    for (int i = 0; i < 5; ++i) {
      double s = 0, m = -1e300;
      for (int j = 0; j < 37; ++j) s += a[i * 37 + j], m = std::max(m, a[i * 37 + j]);
      want[i] = std::string(op) == "sum" ? s : std::string(op) == "mean" ? s / 37 : m;
    }
    expect_near(out[0], want, 1e-5, op);
  }
  {
    GpuKernel k = build("sum", {t}, {{"axes", AttrValue::ints({0})}, {"keepdims", 1}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {{1, 37}}, {{"n", 37}});
    std::vector<double> want(37, 0.0);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 37; ++j) want[j] += a[i * 37 + j];
    expect_near(out[0], want, 1e-5, "sum axis 0");
  }
  {
    // A symbolic number of outputs with an epilogue (mean = sum / count): the sum per invocation.
    Type ts = Type::tensor({n, ir::int_imm(37)}, f);
    GpuKernel k = build("mean", {ts}, {{"axes", AttrValue::ints({1})}, {"keepdims", 1}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {{5, 1}}, {{"n", 5}});
    std::vector<double> want(5, 0.0);
    for (int i = 0; i < 5; ++i)
      for (int j = 0; j < 37; ++j) want[i] += a[i * 37 + j] / 37;
    expect_near(out[0], want, 1e-5, "mean of symbolic rows");
  }
  {
    GpuKernel k = build("argmax", {t}, {{"axis", int64_t{1}}, {"keepdims", 0}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {{5}}, {{"n", 37}});
    for (int i = 0; i < 5; ++i) {
      auto row = a.begin() + i * 37;
      ASSERT_EQ(out[0][i], static_cast<double>(std::max_element(row, row + 37) - row)) << i;
    }
  }
}

TEST_F(GpuOps, LongInnermostReductionsUseTheWorkgroupReduction) {
  DataType f = DataType::float32();
  ir::Var n = ir::size_var("n"), m = ir::size_var("m");
  struct Case {
    Type type;
    std::vector<int64_t> shape, axes;
    int64_t keepdims;
    std::map<std::string, int64_t> dims;
  };
  std::vector<Case> cases = {
      {Type::tensor({n, ir::int_imm(1000)}, f), {70, 1000}, {1}, 0, {{"n", 70}}},
      {Type::tensor({ir::int_imm(3), ir::int_imm(20), ir::int_imm(37)}, f), {3, 20, 37}, {1, 2}, 1, {}},
      {Type::tensor({ir::int_imm(4), m}, f), {4, 129}, {-1}, 0, {{"m", 129}}},  // symbolic K
  };
  for (const Case& c : cases) {
    int64_t rows = c.shape[0], k = numel(c.shape) / rows;
    auto a = random_values(numel(c.shape), rng, -1, 1);
    for (const char* op : {"sum", "mean", "max", "min"}) {
      GpuKernel kn = build(op, {c.type}, {{"axes", AttrValue::ints(c.axes)}, {"keepdims", c.keepdims}});
      EXPECT_EQ(kn.lowered.implementation, std::string(op) + ".reduce.gpu");
      std::vector<int64_t> os = {rows};
      if (c.keepdims) os.insert(os.end(), c.shape.size() - 1, 1);
      auto out = run(kn, {testing::make_tensor(c.shape, f, a)}, {os}, c.dims);
      std::vector<double> want(static_cast<size_t>(rows));
      for (int64_t r = 0; r < rows; ++r) {
        double s = 0, hi = -1e300, lo = 1e300;
        for (int64_t j = 0; j < k; ++j) {
          double v = a[static_cast<size_t>(r * k + j)];
          s += v, hi = std::max(hi, v), lo = std::min(lo, v);
        }
        std::string o = op;
        want[static_cast<size_t>(r)] = o == "sum" ? s : o == "mean" ? s / k : o == "max" ? hi : lo;
      }
      expect_near(out[0], want, 1e-5, std::string(op) + " k=" + std::to_string(k));
    }
  }
  // The whole tensor to a 0-d result: the serial fallback.
  GpuKernel kn = build("sum", {Type::tensor(std::vector<int64_t>{5, 7}, f)}, {{"keepdims", int64_t{0}}});
  auto a = random_values(35, rng, -1, 1);
  auto out = run(kn, {testing::make_tensor({5, 7}, f, a)}, {{}});
  double s = 0;
  for (double v : a) s += v;
  expect_near(out[0], {s}, 1e-5, "sum to 0-d");
}

TEST_F(GpuOps, SoftmaxLogSoftmaxAndLayerNormPerRow) {
  DataType f = DataType::float32();
  ir::Var n = ir::size_var("n");
  const int64_t rows = 130, cols = 33;
  std::vector<int64_t> shape = {rows, cols};
  auto a = random_values(numel(shape), rng, -3, 3);
  Type t = Type::tensor({n, ir::int_imm(cols)}, f);
  for (bool log_form : {false, true}) {
    GpuKernel k = build(log_form ? "nn.log_softmax" : "nn.softmax", {t}, {{"axis", int64_t{-1}}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {shape}, {{"n", rows}});
    std::vector<double> want(a.size());
    for (int64_t i = 0; i < rows; ++i) {
      double m = -1e300, s = 0;
      for (int64_t j = 0; j < cols; ++j) m = std::max(m, a[i * cols + j]);
      for (int64_t j = 0; j < cols; ++j) s += std::exp(a[i * cols + j] - m);
      for (int64_t j = 0; j < cols; ++j) {
        double x = a[i * cols + j] - m;
        want[i * cols + j] = log_form ? x - std::log(s) : std::exp(x) / s;
      }
    }
    expect_near(out[0], want, 1e-5, log_form ? "log_softmax" : "softmax");
  }
  auto g = random_values(cols, rng, 0.5, 1.5), b = random_values(cols, rng, -1, 1);
  GpuKernel k = build("nn.layer_norm", {t, Type::tensor(std::vector<int64_t>{cols}, f), Type::tensor(std::vector<int64_t>{cols}, f)},
                      {{"axis", int64_t{-1}}, {"epsilon", 1e-5}});
  auto out = run(k, {testing::make_tensor(shape, f, a), testing::make_tensor({cols}, f, g), testing::make_tensor({cols}, f, b)},
                 {shape}, {{"n", rows}});
  std::vector<double> want(a.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < cols; ++j) mean += a[i * cols + j] / cols;
    for (int64_t j = 0; j < cols; ++j) var += (a[i * cols + j] - mean) * (a[i * cols + j] - mean) / cols;
    for (int64_t j = 0; j < cols; ++j)
      want[i * cols + j] = (a[i * cols + j] - mean) / std::sqrt(var + 1e-5) * g[j] + b[j];
  }
  expect_near(out[0], want, 1e-4, "layer_norm");
}

}  // namespace
}  // namespace anvil::ops
