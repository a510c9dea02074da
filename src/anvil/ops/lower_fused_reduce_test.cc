// lower_fused on reduction groups (graph/passes/fuse_ops.h): a reduction with its elementwise
// prologue inlined into it and its epilogue after it, one kernel scheduled by the reduction's
// implementation, against a naive double reference on random inputs (uniform [-1, 1), seed
// kSeed). Covers mean with a row axis of no vector multiple (RMS), sum of a broadcast prologue
// over the leading axis (the vectorised schedule), a 0-d sum, argmax (int64 result), prod in
// both of its forms (unrolled, and the log-sum form of long axes), and each reduction to a 0-d
// value with an epilogue after it (the reduction's value a one-element buffer in the kernel).
#include <gtest/gtest.h>

#include <algorithm>
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

TEST_F(FusedReduce, ZeroDimReductionsTakeAnEpilogue) {
  // sum (its reduction stage is the 0-d value itself), then -s * gain.
  const Shape xs{64, 300};
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(64, 300), float32], %p1: Tensor[(), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(), float32] = sum(%p0, keepdims=0)
      %t1: Tensor[(), float32] = negative(%t0)
      %t2: Tensor[(), float32] = multiply(%t1, %p1)
      return %t2
    }
  )");
  std::vector<float> x = random(xs, rng), gain{0.75f};
  double acc = 0;
  for (float v : x) acc += v;
  expect_close(run(k, {{xs, x}, {{}, gain}}, {}), {-acc * 0.75}, "-sum(x) * gain (" + k.implementation + ")", 1e-4);
  // RMS over everything: sqrt(mean(x * x) + eps) * gain.
  Lowered rms = lower_group(R"(
    def @g(%p0: Tensor[(5, 7, 3), float32], %p1: Tensor[(), float32], %p2: Tensor[(), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(5, 7, 3), float32] = multiply(%p0, %p0)
      %t1: Tensor[(), float32] = mean(%t0, keepdims=0)
      %t2: Tensor[(), float32] = add(%t1, %p1)
      %t3: Tensor[(), float32] = sqrt(%t2)
      %t4: Tensor[(), float32] = multiply(%t3, %p2)
      return %t4
    }
  )");
  std::vector<float> y = random({5, 7, 3}, rng), eps{1e-3f};
  double sq = 0;
  for (float v : y) sq += double(v) * v;
  expect_close(run(rms, {{{5, 7, 3}, y}, {{}, eps}, {{}, gain}}, {}), {std::sqrt(sq / 105 + double(eps[0])) * 0.75},
               "rms to 0-d (" + rms.implementation + ")");
  // max of a prologue, then exp(m - 1); and prod, unrolled (6 terms) and in the log-sum form (80).
  Lowered mx = lower_group(R"(
    def @g(%p0: Tensor[(37, 24), float32], %p1: Tensor[(), float32]) -> Tensor[(), float32] {
      %t0: Tensor[(37, 24), float32] = abs(%p0)
      %t1: Tensor[(), float32] = max(%t0, keepdims=0)
      %t2: Tensor[(), float32] = subtract(%t1, %p1)
      %t3: Tensor[(), float32] = exp(%t2)
      return %t3
    }
  )");
  std::vector<float> z = random({37, 24}, rng), one{1.0f};
  double m = 0;
  for (float v : z) m = std::max(m, std::fabs(double(v)));
  expect_close(run(mx, {{{37, 24}, z}, {{}, one}}, {}), {std::exp(m - 1)}, "exp(max|x| - 1) (" + mx.implementation + ")");
  for (int64_t n : {6, 80}) {
    const std::string ts = "Tensor[(" + std::to_string(n) + ",), float32]";
    Lowered pk = lower_group("def @g(%p0: " + ts + ", %p1: Tensor[(), float32]) -> Tensor[(), float32] {\n"
                             "  %t0: " + ts + " = add(%p0, %p1)\n"
                             "  %t1: Tensor[(), float32] = prod(%t0, keepdims=0)\n"
                             "  %t2: Tensor[(), float32] = negative(%t1)\n"
                             "  return %t2\n}\n");
    std::vector<float> w = random({n}, rng);
    for (float& v : w) v /= 8;  // 1 + w in [0.875, 1.125)
    double want = 1;
    for (float v : w) want *= double(v) + 1;
    expect_close(run(pk, {{{n}, w}, {{}, one}}, {}), {-want}, "-prod over " + std::to_string(n), 2e-5);
  }
  // argmax to a 0-d int64, then its negative.
  Lowered am = lower_group(R"(
    def @g(%p0: Tensor[(50,), float32]) -> Tensor[(), int64] {
      %t0: Tensor[(), int64] = argmax(%p0, axis=0, keepdims=0)
      %t1: Tensor[(), int64] = negative(%t0)
      return %t1
    }
  )");
  std::vector<float> a = random({50}, rng);
  const double best = double(std::max_element(a.begin(), a.end()) - a.begin());
  expect_close(run(am, {{{50}, a}}, {}, DataType::int64()), {-best}, "-argmax to 0-d", 0);
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

