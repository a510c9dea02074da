// Operator kernels written as tensor expressions (batch matmul, conv2d NCHW with padding at
// stride 1 and 2, depthwise conv, max and average pooling), each with a simple schedule
// (parallel outer axis, split of an inner axis by a factor that does not divide it, vectorized
// or unrolled), compiled by pipeline::build for both CPU targets ("llvm": JIT in process; "c":
// C source exported to a temporary .so and loaded) and run on fresh random inputs against naive
// double references computed here. Inputs: uniform [-1, 1) from the fixed seed kSeed (printed);
// tolerance 1e-4 relative plus 1e-5 absolute (float sums of at most 27 terms).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "anvil/ir/expr_ops.h"
#include "anvil/pipeline/build.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/te/reduction.h"
#include "anvil/te/schedule.h"

namespace anvil::pipeline {
namespace {

namespace fs = std::filesystem;
using ir::PrimExpr;
using ir::Var;

constexpr uint32_t kSeed = 20261201;
constexpr double kRtol = 1e-4, kAtol = 1e-5;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }

Tensor random_f32(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(-1, 1);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) f32(t)[i] = dist(rng);
  return t;
}

// Filled with NaN so that an element the kernel fails to write cannot pass.
Tensor nan_f32(std::vector<int64_t> shape) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) f32(t)[i] = std::nanf("");
  return t;
}

void expect_close(const float* got, const std::vector<double>& want, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_LE(std::abs(got[i] - want[i]), kAtol + kRtol * std::abs(want[i]))
        << what << " at " << i << ": got " << got[i] << ", want " << want[i] << " (seed " << kSeed << ")";
  }
}

class OpKernelTest : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("op kernel seed %u, tolerance %g relative + %g absolute\n", kSeed, kRtol, kAtol);
  }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("anvil_opk_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // pipeline::build for the target under test; the "c" module goes through export_library.
  Module compile(const te::Schedule& s, const std::vector<te::Tensor>& args, const std::string& name) {
    Module m = build(s, args, Target::parse(GetParam() + " -num-cores=2"), name);
    if (GetParam() == "llvm") return m;
    std::string path = (dir_ / (name + ".so")).string();
    export_library(m, path);
    return Module::load_from_file(path);
  }

  fs::path dir_;
};

// ---- batch matmul ----------------------------------------------------------------------------

TEST_P(OpKernelTest, BatchMatmulFusedParallelVectorizedMatchesReference) {
  const int b = 3, m = 5, n = 7, kk = 9;
  te::Tensor A = te::placeholder({b, m, kk}, DataType::float32(), "A");
  te::Tensor B = te::placeholder({b, kk, n}, DataType::float32(), "B");
  te::IterVar k = te::reduce_axis(0, kk, "k");
  te::Tensor C = te::compute(
      {b, m, n}, [&](Var bb, Var i, Var j) { return te::sum(A(bb, i, k) * B(bb, k, j), {k}); }, "C");
  te::Schedule s = te::create_schedule({C});
  te::IterVar bi = s[C].fuse(C.axis(0), C.axis(1));
  s[C].parallel(bi);
  auto [jo, ji] = s[C].split(C.axis(2), 4);  // 4 does not divide 7
  s[C].reorder(bi, jo, k, ji);
  s[C].vectorize(ji);
  Module mod = compile(s, {A, B, C}, "batch_matmul");
  std::mt19937 rng(kSeed);
  Tensor a = random_f32({b, m, kk}, rng), bt = random_f32({b, kk, n}, rng), c = nan_f32({b, m, n});
  mod["batch_matmul"](a, bt, c);
  std::vector<double> want(static_cast<size_t>(b * m * n), 0.0);
  for (int x = 0; x < b; ++x)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < kk; ++p)
          want[(x * m + i) * n + j] += double(f32(a)[(x * m + i) * kk + p]) * f32(bt)[(x * kk + p) * n + j];
  expect_close(f32(c), want, "batch_matmul");
}

// ---- conv2d NCHW -----------------------------------------------------------------------------

// conv2d NCHW, zero padding `pad`, stride `st`. The padded read clamps its indices into the
// input (select evaluates both sides; the clamped value is discarded outside).
struct Conv2d {
  int N, C, H, W, K, R, S, pad, st, OH, OW;
  te::Tensor data, weight, padded, out;
  Conv2d(int n, int c, int h, int w, int k, int r, int s_, int p, int stride)
      : N(n), C(c), H(h), W(w), K(k), R(r), S(s_), pad(p), st(stride) {
    OH = (H + 2 * pad - R) / st + 1;
    OW = (W + 2 * pad - S) / st + 1;
    data = te::placeholder({N, C, H, W}, DataType::float32(), "data");
    weight = te::placeholder({K, C, R, S}, DataType::float32(), "weight");
    padded = te::compute(
        {N, C, H + 2 * pad, W + 2 * pad},
        [&](Var b, Var ch, Var y, Var x) {
          PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
          PrimExpr yy = ir::min(ir::max(y - pad, 0), H - 1), xx = ir::min(ir::max(x - pad, 0), W - 1);
          return ir::select(inside, data(b, ch, yy, xx), 0.0f);
        },
        "padded");
    te::IterVar rc = te::reduce_axis(0, C, "rc"), ry = te::reduce_axis(0, R, "ry"), rx = te::reduce_axis(0, S, "rx");
    out = te::compute(
        {N, K, OH, OW},
        [&](Var b, Var f, Var y, Var x) {
          return te::sum(padded(b, rc, y * st + ry, x * st + rx) * weight(f, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
  }

  void check(Module& mod, const std::string& name, uint32_t seed) const {
    std::mt19937 rng(seed);
    Tensor d = random_f32({N, C, H, W}, rng), w = random_f32({K, C, R, S}, rng), o = nan_f32({N, K, OH, OW});
    mod[name](d, w, o);
    std::vector<double> want(static_cast<size_t>(N * K * OH * OW), 0.0);
    for (int b = 0; b < N; ++b)
      for (int f = 0; f < K; ++f)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x) {
            double acc = 0;
            for (int c = 0; c < C; ++c)
              for (int r = 0; r < R; ++r)
                for (int q = 0; q < S; ++q) {
                  int iy = y * st + r - pad, ix = x * st + q - pad;
                  if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                  acc += double(f32(d)[((b * C + c) * H + iy) * W + ix]) * f32(w)[((f * C + c) * R + r) * S + q];
                }
            want[((b * K + f) * OH + y) * OW + x] = acc;
          }
    expect_close(f32(o), want, name);
  }
};

TEST_P(OpKernelTest, Conv2dNchwPaddedStride1MatchesReference) {
  Conv2d g(2, 3, 7, 6, 4, 3, 3, 1, 1);  // out 2x4x7x6
  te::Schedule s = te::create_schedule({g.out});
  s[g.out].parallel(g.out.axis(1));
  auto [xo, xi] = s[g.out].split(g.out.axis(3), 4);  // 4 does not divide 6
  s[g.out].unroll(xi);
  Module mod = compile(s, {g.data, g.weight, g.out}, "conv2d_s1");
  g.check(mod, "conv2d_s1", kSeed + 1);
}

TEST_P(OpKernelTest, Conv2dNchwPaddedStride2MatchesReference) {
  Conv2d g(2, 2, 9, 8, 3, 3, 3, 1, 2);  // out 2x3x5x4
  te::Schedule s = te::create_schedule({g.out});
  s[g.padded].compute_inline();
  auto [yo, xo, yi, xi] = s[g.out].tile(g.out.axis(2), g.out.axis(3), 2, 3);  // neither divides
  s[g.out].parallel(g.out.axis(1));
  s[g.out].vectorize(xi);
  Module mod = compile(s, {g.data, g.weight, g.out}, "conv2d_s2");
  g.check(mod, "conv2d_s2", kSeed + 2);
}

// ---- depthwise conv --------------------------------------------------------------------------

TEST_P(OpKernelTest, DepthwiseConvPaddedMatchesReference) {
  const int N = 2, C = 3, H = 6, W = 7, R = 3, pad = 1;
  te::Tensor data = te::placeholder({N, C, H, W}, DataType::float32(), "data");
  te::Tensor w = te::placeholder({C, R, R}, DataType::float32(), "w");
  te::Tensor padded = te::compute(
      {N, C, H + 2 * pad, W + 2 * pad},
      [&](Var b, Var c, Var y, Var x) {
        PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
        return ir::select(inside, data(b, c, ir::min(ir::max(y - pad, 0), H - 1), ir::min(ir::max(x - pad, 0), W - 1)),
                          0.0f);
      },
      "padded");
  te::IterVar ry = te::reduce_axis(0, R, "ry"), rx = te::reduce_axis(0, R, "rx");
  te::Tensor out = te::compute(
      {N, C, H, W},
      [&](Var b, Var c, Var y, Var x) { return te::sum(padded(b, c, y + ry, x + rx) * w(c, ry, rx), {ry, rx}); },
      "depthwise");
  te::Schedule s = te::create_schedule({out});
  s[padded].compute_at(s[out], out.axis(1));
  s[out].parallel(out.axis(0));
  auto [xo, xi] = s[out].split(out.axis(3), 4);  // 4 does not divide 7
  s[out].unroll(ry);
  Module mod = compile(s, {data, w, out}, "depthwise");
  std::mt19937 rng(kSeed + 3);
  Tensor d = random_f32({N, C, H, W}, rng), wt = random_f32({C, R, R}, rng), o = nan_f32({N, C, H, W});
  mod["depthwise"](d, wt, o);
  std::vector<double> want(static_cast<size_t>(N * C * H * W), 0.0);
  for (int b = 0; b < N; ++b)
    for (int c = 0; c < C; ++c)
      for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x)
          for (int r = 0; r < R; ++r)
            for (int q = 0; q < R; ++q) {
              int iy = y + r - pad, ix = x + q - pad;
              if (iy >= 0 && iy < H && ix >= 0 && ix < W)
                want[((b * C + c) * H + y) * W + x] += double(f32(d)[((b * C + c) * H + iy) * W + ix]) * f32(wt)[(c * R + r) * R + q];
            }
  expect_close(f32(o), want, "depthwise");
}

// ---- pooling ---------------------------------------------------------------------------------

// 2x2 windows at stride 2 (the last input row and column are not covered: 7 -> 3, 9 -> 4).
struct Pool {
  static constexpr int N = 2, C = 3, H = 7, W = 9, OH = 3, OW = 4;
  te::Tensor data = te::placeholder({N, C, H, W}, DataType::float32(), "data");

  std::vector<double> reference(Tensor& d, bool is_max) const {
    std::vector<double> want(static_cast<size_t>(N * C * OH * OW));
    for (int b = 0; b < N; ++b)
      for (int c = 0; c < C; ++c)
        for (int y = 0; y < OH; ++y)
          for (int x = 0; x < OW; ++x) {
            double m = -INFINITY, t = 0;
            for (int r = 0; r < 2; ++r)
              for (int q = 0; q < 2; ++q) {
                double v = f32(d)[((b * C + c) * H + y * 2 + r) * W + x * 2 + q];
                m = std::max(m, v);
                t += v;
              }
            want[((b * C + c) * OH + y) * OW + x] = is_max ? m : t / 4;
          }
    return want;
  }
};

TEST_P(OpKernelTest, MaxPooling2x2Stride2MatchesReference) {
  Pool p;
  te::IterVar ry = te::reduce_axis(0, 2, "ry"), rx = te::reduce_axis(0, 2, "rx");
  te::Tensor mx = te::compute(
      {Pool::N, Pool::C, Pool::OH, Pool::OW},
      [&](Var b, Var c, Var y, Var x) { return te::max(p.data(b, c, y * 2 + ry, x * 2 + rx), {ry, rx}); }, "max_pool");
  te::Schedule s = te::create_schedule({mx});
  te::IterVar bc = s[mx].fuse(mx.axis(0), mx.axis(1));
  s[mx].parallel(bc);
  auto [xo, xi] = s[mx].split(mx.axis(3), 3);  // 3 does not divide 4
  s[mx].reorder(bc, mx.axis(2), xo, ry, rx, xi);
  s[mx].vectorize(xi);
  Module mod = compile(s, {p.data, mx}, "max_pool");
  std::mt19937 rng(kSeed + 4);
  Tensor d = random_f32({Pool::N, Pool::C, Pool::H, Pool::W}, rng), o = nan_f32({Pool::N, Pool::C, Pool::OH, Pool::OW});
  mod["max_pool"](d, o);
  expect_close(f32(o), p.reference(d, true), "max_pool");
}

TEST_P(OpKernelTest, AveragePooling2x2Stride2MatchesReference) {
  Pool p;
  te::IterVar sy = te::reduce_axis(0, 2, "sy"), sx = te::reduce_axis(0, 2, "sx");
  te::Tensor sm = te::compute(
      {Pool::N, Pool::C, Pool::OH, Pool::OW},
      [&](Var b, Var c, Var y, Var x) { return te::sum(p.data(b, c, y * 2 + sy, x * 2 + sx), {sy, sx}); }, "sum_pool");
  te::Tensor avg = te::compute(
      {Pool::N, Pool::C, Pool::OH, Pool::OW}, [&](Var b, Var c, Var y, Var x) { return sm(b, c, y, x) / 4.0f; },
      "avg_pool");
  te::Schedule s = te::create_schedule({avg});
  s[avg].parallel(avg.axis(1));
  s[sm].compute_at(s[avg], avg.axis(2));
  auto [xo, xi] = s[avg].split(avg.axis(3), 3);  // 3 does not divide 4
  s[avg].vectorize(xi);
  Module mod = compile(s, {p.data, avg}, "avg_pool");
  std::mt19937 rng(kSeed + 5);
  Tensor d = random_f32({Pool::N, Pool::C, Pool::H, Pool::W}, rng), o = nan_f32({Pool::N, Pool::C, Pool::OH, Pool::OW});
  mod["avg_pool"](d, o);
  expect_close(f32(o), p.reference(d, false), "avg_pool");
}

INSTANTIATE_TEST_SUITE_P(OpKernels, OpKernelTest, ::testing::Values("llvm", "c"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace anvil::pipeline
