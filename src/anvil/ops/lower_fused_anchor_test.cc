// lower_fused on anchor groups (graph/passes/fuse_ops.h): a conv/dense/matmul with its bias,
// activation and residual add as one kernel, scheduled by the anchor's implementation, against
// a naive double reference of the whole group on random inputs (uniform [-1, 1), seed kSeed).
// Covers the NCHWc conv schedule (OIHW weight packed in the kernel, and a prepacked weight)
// with HardSwish reading the conv twice, the depthwise row schedule with ReLU6, the
// transposed conv, the gemm dense with SiLU, and the batched matmul.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
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
constexpr uint32_t kSeed = 20261211;

void expect_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what,
                  double tol = 1e-4) {
  fused_testing::expect_close(got, want, what, tol, kSeed);
}

// Naive NCHW conv (OIHW weight, groups, stride, symmetric pad) in double.
std::vector<double> conv_ref(const std::vector<float>& x, const Shape& xs, const std::vector<float>& w, const Shape& ws,
                             int stride, int pad, int groups, const Shape& os) {
  const int64_t N = xs[0], C = xs[1], H = xs[2], W = xs[3], O = ws[0], Cg = ws[1], R = ws[2], S = ws[3];
  const int64_t OH = os[2], OW = os[3], Og = O / groups;
  std::vector<double> out(size_t(numel(os)), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t xx = 0; xx < OW; ++xx) {
          double acc = 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                const int64_t iy = y * stride + r - pad, ix = xx * stride + s - pad, ci = (o / Og) * Cg + c;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += double(x[((n * C + ci) * H + iy) * W + ix]) * w[((o * Cg + c) * R + r) * S + s];
              }
          out[((n * O + o) * OH + y) * OW + xx] = acc;
        }
  return out;
}

// [O, C, R, S] -> [O/b, C, R, S, b].
std::vector<float> pack(const std::vector<float>& w, const Shape& ws, int64_t b) {
  const int64_t O = ws[0], CRS = ws[1] * ws[2] * ws[3];
  std::vector<float> out(w.size());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < CRS; ++i) out[((o / b) * CRS + i) * b + o % b] = w[o * CRS + i];
  return out;
}

class FusedAnchor : public ::testing::Test {
 protected:
  std::mt19937 rng{kSeed};
};

TEST_F(FusedAnchor, ConvBiasHardSwishResidualAdd) {
  // The conv read twice (HardSwish), a [O, 1, 1] bias and a residual input of the output shape.
  const Shape xs{2, 16, 9, 9}, ws{32, 16, 3, 3}, bs{32, 1, 1}, os{2, 32, 9, 9};
  for (int64_t packed : {0, 16}) {
    const std::string wt = packed ? "Tensor[(2, 16, 3, 3, 16), float32]" : "Tensor[(32, 16, 3, 3), float32]";
    const std::string layout = packed ? ", kernel_layout=\"OIHW16o\"" : "";
    Lowered k = lower_group(R"(
      def @g(%p0: Tensor[(2, 16, 9, 9), float32], %p1: )" +
                            wt + R"(, %p2: Tensor[(32, 1, 1), float32],
             %p3: Tensor[(), float32], %p4: Tensor[(2, 32, 9, 9), float32]) -> Tensor[(2, 32, 9, 9), float32] {
        %t0: Tensor[(2, 32, 9, 9), float32] = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1])" +
                            layout + R"()
        %t1: Tensor[(2, 32, 9, 9), float32] = add(%t0, %p2)
        %t2: Tensor[(2, 32, 9, 9), float32] = add(%t1, %p3)
        %t3: Tensor[(2, 32, 9, 9), float32] = clip(%t2, max=6.0, min=0.0)
        %t4: Tensor[(2, 32, 9, 9), float32] = multiply(%t1, %t3)
        %t5: Tensor[(2, 32, 9, 9), float32] = divide(%t4, %p3)
        %t6: Tensor[(2, 32, 9, 9), float32] = add(%t5, %p4)
        return %t6
      }
    )");
    EXPECT_NE(k.implementation.find("conv2d_nchw.x86"), std::string::npos) << k.implementation;
    // One scalar parameter (3) is both the HardSwish offset and, here, its divisor.
    std::vector<float> x = random(xs, rng), w = random(ws, rng), b = random(bs, rng), res = random(os, rng);
    std::vector<float> three{3.0f};
    std::vector<double> want = conv_ref(x, xs, w, ws, 1, 1, 1, os);
    for (size_t i = 0; i < want.size(); ++i) {
      const double v = want[i] + b[(i / 81) % 32];
      want[i] = v * std::min(std::max(v + 3.0, 0.0), 6.0) / 3.0 + res[i];
    }
    Shape pws = packed ? Shape{2, 16, 3, 3, 16} : ws;
    std::vector<double> got =
        run(k, {{xs, x}, {pws, packed ? pack(w, ws, packed) : w}, {bs, b}, {{}, three}, {os, res}}, os);
    expect_close(got, want, "conv + bias + hardswish + residual, packed " + std::to_string(packed));
  }
}

TEST_F(FusedAnchor, ConvWithAPrimeOutputWidthAndStride2) {
  // 13 columns (no column block divides them: a guarded tail in the vectorised epilogue) and
  // a stride-2 3x3 conv to 7 columns (a 7-lane epilogue), each with a bias and relu.
  struct Case {
    Shape xs, ws, os;
    int stride, pad;
  };
  for (const Case& c : {Case{{1, 8, 13, 13}, {16, 8, 3, 3}, {1, 16, 13, 13}, 1, 1},
                        Case{{1, 8, 13, 13}, {32, 8, 3, 3}, {1, 32, 7, 7}, 2, 1}}) {
    auto dims = [](const Shape& s) {
      std::string out;
      for (int64_t d : s) out += (out.empty() ? "" : ", ") + std::to_string(d);
      return out;
    };
    const Shape bs{c.ws[0], 1, 1};
    Lowered k = lower_group(
        "def @g(%p0: Tensor[(" + dims(c.xs) + "), float32], %p1: Tensor[(" + dims(c.ws) + "), float32], %p2: Tensor[(" +
        dims(bs) + "), float32]) -> Tensor[(" + dims(c.os) + "), float32] {\n  %t0: Tensor[(" + dims(c.os) +
        "), float32] = nn.conv2d(%p0, %p1, padding=[" + dims({c.pad, c.pad, c.pad, c.pad}) + "], strides=[" +
        dims({c.stride, c.stride}) + "])\n  %t1: Tensor[(" + dims(c.os) +
        "), float32] = add(%t0, %p2)\n  %t2: Tensor[(" + dims(c.os) + "), float32] = relu(%t1)\n  return %t2\n}\n");
    std::vector<float> x = random(c.xs, rng), w = random(c.ws, rng), b = random(bs, rng);
    std::vector<double> want = conv_ref(x, c.xs, w, c.ws, c.stride, c.pad, 1, c.os);
    const int64_t plane = c.os[2] * c.os[3];
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(want[i] + b[i / plane], 0.0);
    expect_close(run(k, {{c.xs, x}, {c.ws, w}, {bs, b}}, c.os), want,
                 "conv to " + dims(c.os) + " + bias + relu (" + k.implementation + ")");
  }
}

TEST_F(FusedAnchor, DepthwiseConvBiasRelu6) {
  const Shape xs{1, 12, 9, 9}, ws{12, 1, 3, 3}, bs{12, 1, 1}, os{1, 12, 4, 4};
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(1, 12, 9, 9), float32], %p1: Tensor[(12, 1, 3, 3), float32],
           %p2: Tensor[(12, 1, 1), float32]) -> Tensor[(1, 12, 4, 4), float32] {
      %t0: Tensor[(1, 12, 4, 4), float32] = nn.conv2d(%p0, %p1, groups=12, strides=[2, 2])
      %t1: Tensor[(1, 12, 4, 4), float32] = add(%t0, %p2)
      %t2: Tensor[(1, 12, 4, 4), float32] = clip(%t1, max=6.0, min=0.0)
      return %t2
    }
  )");
  std::vector<float> x = random(xs, rng), w = random(ws, rng), b = random(bs, rng);
  std::vector<double> want = conv_ref(x, xs, w, ws, 2, 0, 12, os);
  for (size_t i = 0; i < want.size(); ++i) want[i] = std::min(std::max(want[i] + b[i / 16], 0.0), 6.0);
  expect_close(run(k, {{xs, x}, {ws, w}, {bs, b}}, os), want, "depthwise + bias + relu6 (" + k.implementation + ")");
}

TEST_F(FusedAnchor, TransposedConvRelu) {
  // 1x1 stride-1 transposed conv (IOHW weight): out[n, o] = sum_c x[n, c] * w[c, o], then relu.
  const Shape xs{1, 3, 5, 5}, ws{3, 4, 1, 1}, os{1, 4, 5, 5};
  Lowered k = lower_group(R"(
    def @g(%p0: Tensor[(1, 3, 5, 5), float32], %p1: Tensor[(3, 4, 1, 1), float32]) -> Tensor[(1, 4, 5, 5), float32] {
      %t0: Tensor[(1, 4, 5, 5), float32] = nn.conv2d_transpose(%p0, %p1)
      %t1: Tensor[(1, 4, 5, 5), float32] = relu(%t0)
      return %t1
    }
  )");
  std::vector<float> x = random(xs, rng), w = random(ws, rng);
  std::vector<double> want(size_t(numel(os)));
  for (int64_t o = 0; o < 4; ++o)
    for (int64_t p = 0; p < 25; ++p) {
      double acc = 0;
      for (int64_t c = 0; c < 3; ++c) acc += double(x[c * 25 + p]) * w[c * 4 + o];
      want[o * 25 + p] = std::max(acc, 0.0);
    }
  expect_close(run(k, {{xs, x}, {ws, w}}, os), want, "conv2d_transpose + relu (" + k.implementation + ")");
}

TEST_F(FusedAnchor, TransposedConvStrideEqualToTheKernelByTaps) {
  // 2x2 stride 2 and 3x3 stride 3 (one tap per output: the taps form), with a bias and
  // relu; widths 6, 12 and 18 divide no vector (guarded tails). Reference: the scatter form.
  struct Case {
    Shape xs, ws;
    int sh, sw;
  };
  for (const Case& c : {Case{{2, 5, 4, 6}, {5, 3, 2, 2}, 2, 2}, Case{{1, 4, 3, 6}, {4, 2, 3, 3}, 3, 3}}) {
    const int64_t N = c.xs[0], C = c.xs[1], H = c.xs[2], W = c.xs[3], O = c.ws[1], R = c.ws[2], S = c.ws[3];
    const Shape os{N, O, H * c.sh, W * c.sw}, bs{O, 1, 1};
    auto dims = [](const Shape& s) {
      std::string out;
      for (int64_t d : s) out += (out.empty() ? "" : ", ") + std::to_string(d);
      return out;
    };
    const std::string ot = "Tensor[(" + dims(os) + "), float32]";
    Lowered k = lower_group("def @g(%p0: Tensor[(" + dims(c.xs) + "), float32], %p1: Tensor[(" + dims(c.ws) +
                            "), float32], %p2: Tensor[(" + dims(bs) + "), float32]) -> " + ot + " {\n  %t0: " + ot +
                            " = nn.conv2d_transpose(%p0, %p1, strides=[" + dims({c.sh, c.sw}) + "])\n  %t1: " + ot +
                            " = add(%t0, %p2)\n  %t2: " + ot + " = relu(%t1)\n  return %t2\n}\n");
    std::vector<float> x = random(c.xs, rng), w = random(c.ws, rng), b = random(bs, rng);
    std::vector<double> want(size_t(numel(os)), 0.0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t ci = 0; ci < C; ++ci)
        for (int64_t iy = 0; iy < H; ++iy)
          for (int64_t ix = 0; ix < W; ++ix)
            for (int64_t o = 0; o < O; ++o)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t q = 0; q < S; ++q)
                  want[((n * O + o) * os[2] + iy * c.sh + r) * os[3] + ix * c.sw + q] +=
                      double(x[((n * C + ci) * H + iy) * W + ix]) * w[((ci * O + o) * R + r) * S + q];
    const int64_t plane = os[2] * os[3];
    for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(want[i] + b[(i / plane) % O], 0.0);
    expect_close(run(k, {{c.xs, x}, {c.ws, w}, {bs, b}}, os), want,
                 "conv2d_transpose to " + dims(os) + " + bias + relu (" + k.implementation + ")");
  }
}

TEST_F(FusedAnchor, DenseBiasSiluAndBatchedMatmulRelu) {
  {
    const Shape xs{2, 5, 40}, ws{33, 40}, bs{33}, os{2, 5, 33};
    Lowered k = lower_group(R"(
      def @g(%p0: Tensor[(2, 5, 40), float32], %p1: Tensor[(33, 40), float32],
             %p2: Tensor[(33,), float32]) -> Tensor[(2, 5, 33), float32] {
        %t0: Tensor[(2, 5, 33), float32] = nn.dense(%p0, %p1)
        %t1: Tensor[(2, 5, 33), float32] = add(%t0, %p2)
        %t2: Tensor[(2, 5, 33), float32] = sigmoid(%t1)
        %t3: Tensor[(2, 5, 33), float32] = multiply(%t1, %t2)
        return %t3
      }
    )");
    std::vector<float> x = random(xs, rng), w = random(ws, rng), b = random(bs, rng);
    std::vector<double> want(size_t(numel(os)));
    for (int64_t r = 0; r < 10; ++r)
      for (int64_t j = 0; j < 33; ++j) {
        double v = b[j];
        for (int64_t kk = 0; kk < 40; ++kk) v += double(x[r * 40 + kk]) * w[j * 40 + kk];
        want[r * 33 + j] = v / (1.0 + std::exp(-v));
      }
    expect_close(run(k, {{xs, x}, {ws, w}, {bs, b}}, os), want, "dense + bias + silu (" + k.implementation + ")");
  }
  {
    const Shape as{2, 7, 9}, bs{2, 9, 11}, os{2, 7, 11};
    Lowered k = lower_group(R"(
      def @g(%p0: Tensor[(2, 7, 9), float32], %p1: Tensor[(2, 9, 11), float32],
             %p2: Tensor[(2, 7, 11), float32]) -> Tensor[(2, 7, 11), float32] {
        %t0: Tensor[(2, 7, 11), float32] = matmul(%p0, %p1)
        %t1: Tensor[(2, 7, 11), float32] = add(%t0, %p2)
        %t2: Tensor[(2, 7, 11), float32] = relu(%t1)
        return %t2
      }
    )");
    std::vector<float> a = random(as, rng), b = random(bs, rng), c = random(os, rng);
    std::vector<double> want(size_t(numel(os)));
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t i = 0; i < 7; ++i)
        for (int64_t j = 0; j < 11; ++j) {
          const int64_t o = (t * 7 + i) * 11 + j;
          double v = c[o];
          for (int64_t kk = 0; kk < 9; ++kk) v += double(a[(t * 7 + i) * 9 + kk]) * b[(t * 9 + kk) * 11 + j];
          want[o] = std::max(v, 0.0);
        }
    expect_close(run(k, {{as, a}, {bs, b}, {os, c}}, os), want,
                 "batched matmul + add + relu (" + k.implementation + ")");
  }
}

}  // namespace
}  // namespace anvil::ops
