// Operator kernels written as tensor expressions (batch matmul, conv2d NCHW with padding at
// stride 1 and 2, depthwise conv, max and average pooling), each with a simple schedule
// (parallel outer axis, split of an inner axis by a factor that does not divide it, vectorized
// or unrolled), compiled by pipeline::build for both CPU targets ("llvm": JIT in process; "c":
// C source exported to a temporary .so and loaded) and run on fresh random inputs against naive
// double references. The kernels and references are te/te_test_kernels.h (shared with the
// interpreter tests). Inputs: uniform [-1, 1) from the fixed seed kSeed (printed); tolerance
// 1e-4 relative plus 1e-5 absolute (float sums of at most 27 terms).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "anvil/pipeline/build.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/test_util.h"
#include "anvil/te/schedule.h"
#include "anvil/te/te_test_kernels.h"

namespace anvil::pipeline {
namespace {

namespace fs = std::filesystem;

constexpr uint32_t kSeed = 20261201;
constexpr double kRtol = 1e-4, kAtol = 1e-5;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }

using testing::random_f32;

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
  te::testing::BatchMatmul g(3, 5, 7, 9);
  te::Tensor C = g.C;
  te::Schedule s = te::create_schedule({C});
  te::IterVar bi = s[C].fuse(C.axis(0), C.axis(1));
  s[C].parallel(bi);
  auto [jo, ji] = s[C].split(C.axis(2), 4);  // 4 does not divide 7
  s[C].reorder(bi, jo, g.k, ji);
  s[C].vectorize(ji);
  Module mod = compile(s, {g.A, g.B, C}, "batch_matmul");
  std::mt19937 rng(kSeed);
  Tensor a = random_f32({3, 5, 9}, rng), bt = random_f32({3, 9, 7}, rng), c = nan_f32({3, 5, 7});
  mod["batch_matmul"](a, bt, c);
  expect_close(f32(c), g.reference(f32(a), f32(bt)), "batch_matmul");
}

// ---- conv2d NCHW -----------------------------------------------------------------------------

// Runs `name` (compiled from g) on random inputs from `seed`, against g's reference.
void check_conv(const te::testing::Conv2dNchw& g, Module& mod, const std::string& name, uint32_t seed) {
  std::mt19937 rng(seed);
  Tensor d = random_f32({g.N, g.C, g.H, g.W}, rng), w = random_f32({g.K, g.C, g.R, g.S}, rng),
         o = nan_f32({g.N, g.K, g.OH, g.OW});
  mod[name](d, w, o);
  expect_close(f32(o), g.reference(f32(d), f32(w)), name);
}

TEST_P(OpKernelTest, Conv2dNchwPaddedStride1MatchesReference) {
  te::testing::Conv2dNchw g(2, 3, 7, 6, 4, 3, 3, 1, 1);  // out 2x4x7x6
  te::Schedule s = te::create_schedule({g.out});
  s[g.out].parallel(g.out.axis(1));
  auto [xo, xi] = s[g.out].split(g.out.axis(3), 4);  // 4 does not divide 6
  s[g.out].unroll(xi);
  Module mod = compile(s, {g.data, g.weight, g.out}, "conv2d_s1");
  check_conv(g, mod, "conv2d_s1", kSeed + 1);
}

TEST_P(OpKernelTest, Conv2dNchwPaddedStride2MatchesReference) {
  te::testing::Conv2dNchw g(2, 2, 9, 8, 3, 3, 3, 1, 2);  // out 2x3x5x4
  te::Schedule s = te::create_schedule({g.out});
  s[g.padded].compute_inline();
  auto [yo, xo, yi, xi] = s[g.out].tile(g.out.axis(2), g.out.axis(3), 2, 3);  // neither divides
  s[g.out].parallel(g.out.axis(1));
  s[g.out].vectorize(xi);
  Module mod = compile(s, {g.data, g.weight, g.out}, "conv2d_s2");
  check_conv(g, mod, "conv2d_s2", kSeed + 2);
}

// ---- depthwise conv --------------------------------------------------------------------------

TEST_P(OpKernelTest, DepthwiseConvPaddedMatchesReference) {
  te::testing::DepthwiseConv g(2, 3, 6, 7, 3, 1);  // out 2x3x6x7
  te::Schedule s = te::create_schedule({g.out});
  s[g.padded].compute_at(s[g.out], g.out.axis(1));
  s[g.out].parallel(g.out.axis(0));
  auto [xo, xi] = s[g.out].split(g.out.axis(3), 4);  // 4 does not divide 7
  s[g.out].unroll(g.ry);
  Module mod = compile(s, {g.data, g.weight, g.out}, "depthwise");
  std::mt19937 rng(kSeed + 3);
  Tensor d = random_f32({2, 3, 6, 7}, rng), wt = random_f32({3, 3, 3}, rng), o = nan_f32({2, 3, 6, 7});
  mod["depthwise"](d, wt, o);
  expect_close(f32(o), g.reference(f32(d), f32(wt)), "depthwise");
}

// ---- pooling ---------------------------------------------------------------------------------

// 2x2 windows at stride 2 (the last input row and column are not covered: 7 -> 3, 9 -> 4).
TEST_P(OpKernelTest, MaxPooling2x2Stride2MatchesReference) {
  te::testing::Pool2x2 p(2, 3, 7, 9);
  te::Tensor mx = p.max_pool;
  te::Schedule s = te::create_schedule({mx});
  te::IterVar bc = s[mx].fuse(mx.axis(0), mx.axis(1));
  s[mx].parallel(bc);
  auto [xo, xi] = s[mx].split(mx.axis(3), 3);  // 3 does not divide 4
  s[mx].reorder(bc, mx.axis(2), xo, mx.reduce_axis(0), mx.reduce_axis(1), xi);
  s[mx].vectorize(xi);
  Module mod = compile(s, {p.data, mx}, "max_pool");
  std::mt19937 rng(kSeed + 4);
  Tensor d = random_f32({2, 3, 7, 9}, rng), o = nan_f32({2, 3, 3, 4});
  mod["max_pool"](d, o);
  expect_close(f32(o), p.reference(f32(d), true), "max_pool");
}

TEST_P(OpKernelTest, AveragePooling2x2Stride2MatchesReference) {
  te::testing::Pool2x2 p(2, 3, 7, 9);
  te::Tensor avg = p.avg_pool;
  te::Schedule s = te::create_schedule({avg});
  s[avg].parallel(avg.axis(1));
  s[p.sum_pool].compute_at(s[avg], avg.axis(2));
  auto [xo, xi] = s[avg].split(avg.axis(3), 3);  // 3 does not divide 4
  s[avg].vectorize(xi);
  Module mod = compile(s, {p.data, avg}, "avg_pool");
  std::mt19937 rng(kSeed + 5);
  Tensor d = random_f32({2, 3, 7, 9}, rng), o = nan_f32({2, 3, 3, 4});
  mod["avg_pool"](d, o);
  expect_close(f32(o), p.reference(f32(d), false), "avg_pool");
}

INSTANTIATE_TEST_SUITE_P(OpKernels, OpKernelTest, ::testing::Values("llvm", "c"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace anvil::pipeline
