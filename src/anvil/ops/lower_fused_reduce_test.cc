// lower_fused on reduction groups (graph/passes/fuse_ops.h): a reduction with its elementwise
// prologue inlined into it and its epilogue after it, one kernel scheduled by the reduction's
// implementation, against a naive double reference on random inputs (uniform [-1, 1), seed
// kSeed). Covers mean with a row axis of no vector multiple (RMS), sum of a broadcast prologue
// over the leading axis (the vectorised schedule), a 0-d sum, argmax (int64 result), and prod
// in both of its forms (unrolled, and the log-sum form of long axes).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "anvil/ops/fused_test_util.h"

namespace anvil::ops {
namespace {

using fused_testing::f32;
using fused_testing::lower_group;
using fused_testing::Lowered;
using fused_testing::numel;
using fused_testing::random;
using fused_testing::run;
using fused_testing::Shape;
constexpr uint32_t kSeed = 20261212;

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                  double tol = 1e-5) {
  fused_testing::expect_close(got, want, what, tol, kSeed);
}

class FusedReduce : public ::testing::Test {
 protected:
  std::mt19937 rng{kSeed};
};

TEST_F(FusedReduce, RmsMeanOfSquaresPlusEpsSqrt) {
  const int64_t N = 6, C = 37;
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(6, 37), float32], %p1: Tensor[(6, 1), float32],
           %p2: Tensor[(), float32]) -> Tensor[(6, 1), float32] {
      %t0: Tensor[(6, 37), float32] = subtract(%p0, %p1)
      %t1: Tensor[(6, 37), float32] = multiply(%t0, %t0)
      %t2: Tensor[(6, 1), float32] = mean(%t1, axes=[1], keepdims=1)
      %t3: Tensor[(6, 1), float32] = add(%t2, %p2)
      %t4: Tensor[(6, 1), float32] = sqrt(%t3)
      return %t4
    }
  )");
  EXPECT_NE(k.implementation.find("mean.cpu"), std::string::npos) << k.implementation;
  std::vector<float> x = random({N, C}, rng), m = random({N, 1}, rng), eps{1e-3f};
  std::vector<double> want(N);
  for (int64_t n = 0; n < N; ++n) {
    double acc = 0;
    for (int64_t c = 0; c < C; ++c) {
      const double d = double(x[n * C + c]) - m[n];
      acc += d * d;
    }
    want[n] = std::sqrt(acc / C + eps[0]);
  }
  expect_close(run(k, {{{N, C}, x}, {{N, 1}, m}, {{}, eps}}, {N, 1}), want, "rms (" + k.implementation + ")");
}

TEST_F(FusedReduce, SumOfExpOverTheLeadingAxisThenLog) {
  // Reducing axis 0 of [37, 24]: the innermost axis is kept and vectorised inside the reduction.
  const int64_t R = 37, C = 24;
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(37, 24), float32], %p1: Tensor[(24,), float32]) -> Tensor[(24,), float32] {
      %t0: Tensor[(37, 24), float32] = subtract(%p0, %p1)
      %t1: Tensor[(37, 24), float32] = exp(%t0)
      %t2: Tensor[(24,), float32] = sum(%t1, axes=[0], keepdims=0)
      %t3: Tensor[(24,), float32] = log(%t2)
      %t4: Tensor[(24,), float32] = add(%t3, %p1)
      return %t4
    }
  )");
  std::vector<float> x = random({R, C}, rng), m = random({C}, rng);
  std::vector<double> want(C);
  for (int64_t c = 0; c < C; ++c) {
    double acc = 0;
    for (int64_t r = 0; r < R; ++r) acc += std::exp(double(x[r * C + c]) - m[c]);
    want[c] = std::log(acc) + m[c];
  }
  expect_close(run(k, {{{R, C}, x}, {{C}, m}}, {C}), want, "logsumexp (" + k.implementation + ")");
}

TEST_F(FusedReduce, ZeroDimSumOfAbsAndMaxOfAProduct) {
  const Shape xs{5, 7, 3};
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(5, 7, 3), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(5, 7, 3), float32] = abs(%p0)
      %t1: Tensor[(), float32] = sum(%t0, keepdims=0)
      return %t1
    }
  )");
  std::vector<float> x = random(xs, rng);
  double acc = 0;
  for (float v : x) acc += std::fabs(double(v));
  expect_close(run(k, {{xs, x}}, {}), {acc}, "sum(abs) to 0-d");
  // max over axes 0 and 2 of x * y, then a negative.
  Lowered k2 = lower_group(R"(
    def @g(%p0: Tensor[(5, 7, 3), float32], %p1: Tensor[(5, 7, 3), float32]) -> Tensor[(1, 7, 1), float32] {
      %t0: Tensor[(5, 7, 3), float32] = multiply(%p0, %p1)
      %t1: Tensor[(1, 7, 1), float32] = max(%t0, axes=[0, 2], keepdims=1)
      %t2: Tensor[(1, 7, 1), float32] = negative(%t1)
      return %t2
    }
  )");
  std::vector<float> y = random(xs, rng);
  std::vector<double> want(7, -INFINITY);
  for (int64_t a = 0; a < 5; ++a)
    for (int64_t b = 0; b < 7; ++b)
      for (int64_t c = 0; c < 3; ++c) {
        const size_t i = size_t((a * 7 + b) * 3 + c);
        want[b] = std::max(want[b], double(x[i]) * y[i]);
      }
  for (double& w : want) w = -w;
  expect_close(run(k2, {{xs, x}, {xs, y}}, {1, 7, 1}), want, "-max(x * y) (" + k2.implementation + ")");
}

TEST_F(FusedReduce, ArgmaxOfAPrologue) {
  const int64_t N = 9, C = 13;
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(9, 13), float32], %p1: Tensor[(9, 13), float32]) -> Tensor[(9,), int64] {
      %t0: Tensor[(9, 13), float32] = subtract(%p0, %p1)
      %t1: Tensor[(9, 13), float32] = abs(%t0)
      %t2: Tensor[(9,), int64] = argmax(%t1, axis=1, keepdims=0)
      return %t2
    }
  )");
  std::vector<float> x = random({N, C}, rng), y = random({N, C}, rng);
  std::vector<double> want(N);
  for (int64_t n = 0; n < N; ++n) {
    int64_t best = 0;
    for (int64_t c = 1; c < C; ++c)
      if (std::fabs(x[n * C + c] - y[n * C + c]) > std::fabs(x[n * C + best] - y[n * C + best])) best = c;
    want[n] = double(best);
  }
  expect_close(run(k, {{{N, C}, x}, {{N, C}, y}}, {N}, DataType::int64()), want, "argmax(|x - y|)", 0);
}

TEST_F(FusedReduce, ProdOfAPrologueShortAndLongAxes) {
  // 1 + x / 8 in [0.875, 1.125): an unrolled product of 12 and the log-sum form for 80.
  for (int64_t C : {12, 80}) {
    const int64_t N = 5;
    const std::string xs = "Tensor[(5, " + std::to_string(C) + "), float32]";
    Lowered k = lower_group("def @g(%p0: " + xs +
                            ", %p1: Tensor[(), float32], %p2: Tensor[(), float32])"
                            " -> Tensor[(5,), float32] {\n"
                            "  %t0: " +
                            xs +
                            " = divide(%p0, %p1)\n"
                            "  %t1: " +
                            xs +
                            " = add(%t0, %p2)\n"
                            "  %t2: Tensor[(5,), float32] = prod(%t1, axes=[1], keepdims=0)\n"
                            "  %t3: Tensor[(5,), float32] = multiply(%t2, %p1)\n"
                            "  return %t3\n}\n");
    std::vector<float> x = random({N, C}, rng), eight{8.0f}, one{1.0f};
    std::vector<double> want(N, 8.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c) want[n] *= double(x[n * C + c]) / 8 + 1;
    // Float32 rounding of each term: relative ~1e-7 per term.
    expect_close(run(k, {{{N, C}, x}, {{}, eight}, {{}, one}}, {N}), want, "prod over " + std::to_string(C), 2e-5);
  }
}

}  // namespace
}  // namespace anvil::ops
