// Whole kernels written as tensor expressions, scheduled, lowered, run in the reference TIR
// interpreter and compared with naive double references: broadcast, softmax, batch matmul,
// conv2d NCHW with padding, depthwise conv, pooling, and symbolic shapes at several sizes.
// Inputs: uniform [-1, 1) from seed kSeed (printed on failure); tolerance 1e-5 relative plus
// 1e-5 absolute unless stated.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "anvil/te/reduction.h"
#include "anvil/te/te_test_util.h"

namespace anvil::te {
namespace {

using namespace anvil::te::testing;
using ir::max;
using ir::min;

TEST(TeKernels, BroadcastBiasAdd) {
  Tensor A = placeholder({6, 5}, DataType::float32(), "A");
  Tensor bias = placeholder({5}, DataType::float32(), "bias");
  Tensor C = compute(
      {6, 5}, [&](Var i, Var j) { return A(i, j) + bias(j); }, "C");
  Schedule s = create_schedule({C});
  auto [jo, ji] = s[C].split(C.axis(1), 2);
  s[C].vectorize(ji);
  tir::PrimFunc f = lower(s, {A, bias, C}, "bias_add");
  HostTensor a({6, 5}), b({5}), c({6, 5});
  fill_random(a, kSeed);
  fill_random(b, kSeed + 1);
  run(f, {a.ptr(), b.ptr(), c.ptr()});
  std::vector<double> want(30);
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) want[i * 5 + j] = double(a.at({i, j})) + b[j];
  expect_close(c, want);
}

// softmax over rows: max-reduce, exp, sum-reduce, divide.
struct Softmax {
  Tensor A, M, E, S, Y;
  Softmax(PrimExpr n, PrimExpr m) {
    A = placeholder({n, m}, DataType::float32(), "A");
    IterVar k1 = reduce_axis(0, m, "k1"), k2 = reduce_axis(0, m, "k2");
    M = compute(
        {n}, [&](Var i) { return te::max(A(i, k1), {k1}); }, "M");
    E = compute(
        {n, m}, [&](Var i, Var j) { return ir::exp(A(i, j) - M(i)); }, "E");
    S = compute(
        {n}, [&](Var i) { return te::sum(E(i, k2), {k2}); }, "S");
    Y = compute(
        {n, m}, [&](Var i, Var j) { return E(i, j) / S(i); }, "Y");
  }
};

void check_softmax(const tir::PrimFunc& f, int n, int m) {
  HostTensor a({n, m}), y({n, m});
  fill_random(a, kSeed, -4.0f, 4.0f);
  run(f, {a.ptr(), y.ptr()});
  std::vector<double> want(static_cast<size_t>(n * m));
  for (int i = 0; i < n; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int j = 0; j < m; ++j) mx = std::max(mx, double(a.at({i, j})));
    for (int j = 0; j < m; ++j) sum += std::exp(double(a.at({i, j})) - mx);
    for (int j = 0; j < m; ++j) want[i * m + j] = std::exp(double(a.at({i, j})) - mx) / sum;
  }
  expect_close(y, want);
}

TEST(TeKernels, SoftmaxFourStagesAtTheRoot) {
  Softmax g(5, 7);
  Schedule s = create_schedule({g.Y});
  check_softmax(lower(s, {g.A, g.Y}, "softmax"), 5, 7);
}

TEST(TeKernels, SoftmaxStagesComputedPerRow) {
  Softmax g(6, 10);
  Schedule s = create_schedule({g.Y});
  s[g.Y].parallel(g.Y.axis(0));
  s[g.M].compute_at(s[g.Y], g.Y.axis(0));
  s[g.E].compute_at(s[g.Y], g.Y.axis(0));
  s[g.S].compute_at(s[g.Y], g.Y.axis(0));
  auto [jo, ji] = s[g.Y].split(g.Y.axis(1), 4);
  s[g.Y].vectorize(ji);
  tir::PrimFunc f = lower(s, {g.A, g.Y}, "softmax_rows");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("allocate(float32, [1, 10]"), std::string::npos) << text;  // one row of E
  check_softmax(f, 6, 10);
}

TEST(TeKernels, SymbolicSoftmaxPerRowAllocatesOneRow) {
  Var n = ir::size_var("n"), m = ir::size_var("m");
  Softmax g(n, m);
  Schedule s = create_schedule({g.Y});
  s[g.M].compute_at(s[g.Y], g.Y.axis(0));
  s[g.E].compute_at(s[g.Y], g.Y.axis(0));
  s[g.S].compute_at(s[g.Y], g.Y.axis(0));
  auto [jo, ji] = s[g.Y].split(g.Y.axis(1), 4);
  tir::PrimFunc f = lower(s, {g.A, g.Y}, "softmax_n");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("E = allocate(float32, [1, m]"), std::string::npos) << text;
  for (auto [nn, mm] : {std::pair{1, 1}, {3, 8}, {4, 13}}) {
    SCOPED_TRACE(::testing::Message() << "n=" << nn << " m=" << mm);
    check_softmax(f, nn, mm);
  }
}

TEST(TeKernels, SoftmaxWithInlinedExp) {
  Softmax g(3, 9);
  Schedule s = create_schedule({g.Y});
  s[g.E].compute_inline();
  check_softmax(lower(s, {g.A, g.Y}, "softmax_inline"), 3, 9);
}

TEST(TeKernels, BatchMatmulFusedAndVectorized) {
  const int b = 3, m = 5, n = 6, kk = 7;
  Tensor A = placeholder({b, m, kk}, DataType::float32(), "A");
  Tensor B = placeholder({b, kk, n}, DataType::float32(), "B");
  IterVar k = reduce_axis(0, kk, "k");
  Tensor C = compute(
      {b, m, n}, [&](Var bb, Var i, Var j) { return sum(A(bb, i, k) * B(bb, k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor CL = s.cache_write(C, "local");
  IterVar bi = s[C].fuse(C.axis(0), C.axis(1));
  s[C].parallel(bi);
  auto [jo, ji] = s[C].split(C.axis(2), 4);
  s[CL].compute_at(s[C], jo);
  s[CL].reorder(CL.reduce_axis(0), CL.axis(2));
  s[CL].vectorize(CL.axis(2));
  tir::PrimFunc f = lower(s, {A, B, C}, "batch_matmul");
  HostTensor a({b, m, kk}), bt({b, kk, n}), c({b, m, n});
  fill_random(a, kSeed);
  fill_random(bt, kSeed + 1);
  run(f, {a.ptr(), bt.ptr(), c.ptr()});
  std::vector<double> want(static_cast<size_t>(b * m * n), 0.0);
  for (int x = 0; x < b; ++x)
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < kk; ++p) want[(x * m + i) * n + j] += double(a.at({x, i, p})) * bt.at({x, p, j});
  expect_close(c, want);
}

// conv2d NCHW, zero padding `pad`, stride `st`. select() evaluates both sides, so the padded
// read clamps its indices into the input (the clamped value is discarded outside).
struct Conv2d {
  int N, C, H, W, K, R, S, pad, st, OH, OW;
  Tensor data, weight, padded, out;
  Conv2d(int n, int c, int h, int w, int k, int r, int s_, int p, int stride)
      : N(n), C(c), H(h), W(w), K(k), R(r), S(s_), pad(p), st(stride) {
    OH = (H + 2 * pad - R) / st + 1;
    OW = (W + 2 * pad - S) / st + 1;
    data = placeholder({N, C, H, W}, DataType::float32(), "data");
    weight = placeholder({K, C, R, S}, DataType::float32(), "weight");
    padded = compute(
        {N, C, H + 2 * pad, W + 2 * pad},
        [&](Var b, Var ch, Var y, Var x) {
          PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
          PrimExpr yy = min(max(y - pad, 0), H - 1), xx = min(max(x - pad, 0), W - 1);
          return ir::select(inside, data(b, ch, yy, xx), 0.0f);
        },
        "padded");
    IterVar rc = reduce_axis(0, C, "rc"), ry = reduce_axis(0, R, "ry"), rx = reduce_axis(0, S, "rx");
    out = compute(
        {N, K, OH, OW},
        [&](Var b, Var f, Var y, Var x) {
          return sum(padded(b, rc, y * st + ry, x * st + rx) * weight(f, rc, ry, rx), {rc, ry, rx});
        },
        "conv");
  }
  std::vector<double> reference(const HostTensor& d, const HostTensor& w) const {
    std::vector<double> o(static_cast<size_t>(N * K * OH * OW), 0.0);
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
                  acc += double(const_cast<HostTensor&>(d).at({b, c, iy, ix})) *
                         const_cast<HostTensor&>(w).at({f, c, r, q});
                }
            o[((b * K + f) * OH + y) * OW + x] = acc;
          }
    return o;
  }
  void check(const tir::PrimFunc& fn) const {
    HostTensor d({N, C, H, W}), w({K, C, R, S}), o({N, K, OH, OW});
    fill_random(d, kSeed);
    fill_random(w, kSeed + 1);
    run(fn, {d.ptr(), w.ptr(), o.ptr()});
    expect_close(o, reference(d, w), 1e-5, 1e-5);
  }
};

TEST(TeKernels, Conv2dNchwPaddedDefaultSchedule) {
  Conv2d g(1, 3, 7, 6, 4, 3, 3, 1, 1);
  Schedule s = create_schedule({g.out});
  g.check(lower(s, {g.data, g.weight, g.out}, "conv2d"));
}

TEST(TeKernels, Conv2dNchwStride2WithInlinedPaddingAndTiles) {
  Conv2d g(2, 2, 9, 8, 3, 3, 3, 1, 2);
  Schedule s = create_schedule({g.out});
  s[g.padded].compute_inline();
  auto [yo, xo, yi, xi] = s[g.out].tile(g.out.axis(2), g.out.axis(3), 2, 3);
  s[g.out].parallel(g.out.axis(1));
  s[g.out].vectorize(xi);
  g.check(lower(s, {g.data, g.weight, g.out}, "conv2d_s2"));
}

TEST(TeKernels, Conv2dPaddingComputedPerOutputRow) {
  Conv2d g(1, 2, 6, 5, 2, 3, 3, 1, 1);
  Schedule s = create_schedule({g.out});
  s[g.padded].compute_at(s[g.out], g.out.axis(2));
  tir::PrimFunc f = lower(s, {g.data, g.weight, g.out}, "conv2d_rows");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("allocate(float32, [1, 2, 3, 7]"), std::string::npos) << text;  // 3 padded rows
  g.check(f);
}

TEST(TeKernels, DepthwiseConvWithPadding) {
  const int C = 3, H = 6, W = 7, R = 3, pad = 1;
  Tensor data = placeholder({1, C, H, W}, DataType::float32(), "data");
  Tensor w = placeholder({C, R, R}, DataType::float32(), "w");
  Tensor padded = compute(
      {1, C, H + 2, W + 2},
      [&](Var b, Var c, Var y, Var x) {
        PrimExpr inside = y >= pad && y < H + pad && x >= pad && x < W + pad;
        return ir::select(inside, data(b, c, min(max(y - pad, 0), H - 1), min(max(x - pad, 0), W - 1)), 0.0f);
      },
      "padded");
  IterVar ry = reduce_axis(0, R, "ry"), rx = reduce_axis(0, R, "rx");
  Tensor out = compute(
      {1, C, H, W},
      [&](Var b, Var c, Var y, Var x) {
        return sum(padded(b, c, y + ry, x + rx) * w(c, ry, rx), {ry, rx});
      },
      "depthwise");
  Schedule s = create_schedule({out});
  s[padded].compute_at(s[out], out.axis(1));
  auto [xo, xi] = s[out].split(out.axis(3), 4);
  s[out].unroll(ry);
  tir::PrimFunc f = lower(s, {data, w, out}, "depthwise");
  HostTensor d({1, C, H, W}), wt({C, R, R}), o({1, C, H, W});
  fill_random(d, kSeed);
  fill_random(wt, kSeed + 1);
  run(f, {d.ptr(), wt.ptr(), o.ptr()});
  std::vector<double> want(static_cast<size_t>(C * H * W), 0.0);
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x)
        for (int r = 0; r < R; ++r)
          for (int q = 0; q < R; ++q) {
            int iy = y + r - pad, ix = x + q - pad;
            if (iy >= 0 && iy < H && ix >= 0 && ix < W)
              want[(c * H + y) * W + x] += double(d.at({0, c, iy, ix})) * wt.at({c, r, q});
          }
  expect_close(o, want);
}

TEST(TeKernels, MaxAndAveragePooling2x2Stride2) {
  const int C = 2, H = 7, W = 9, OH = 3, OW = 4;
  Tensor data = placeholder({1, C, H, W}, DataType::float32(), "data");
  IterVar ry = reduce_axis(0, 2, "ry"), rx = reduce_axis(0, 2, "rx");
  IterVar sy = reduce_axis(0, 2, "sy"), sx = reduce_axis(0, 2, "sx");
  Tensor mx = compute(
      {1, C, OH, OW},
      [&](Var b, Var c, Var y, Var x) {
        return te::max(data(b, c, y * 2 + ry, x * 2 + rx), {ry, rx});
      },
      "max_pool");
  Tensor sm = compute(
      {1, C, OH, OW},
      [&](Var b, Var c, Var y, Var x) {
        return te::sum(data(b, c, y * 2 + sy, x * 2 + sx), {sy, sx});
      },
      "sum_pool");
  Tensor avg = compute(
      {1, C, OH, OW}, [&](Var b, Var c, Var y, Var x) { return sm(b, c, y, x) / 4.0f; }, "avg_pool");
  Schedule s = create_schedule({mx, avg});
  s[sm].compute_at(s[avg], avg.axis(2));
  auto [xo, xi] = s[mx].split(mx.axis(3), 3);
  tir::PrimFunc f = lower(s, {data, mx, avg}, "pool");
  HostTensor d({1, C, H, W}), om({1, C, OH, OW}), oa({1, C, OH, OW});
  fill_random(d, kSeed);
  run(f, {d.ptr(), om.ptr(), oa.ptr()});
  std::vector<double> want_max(C * OH * OW), want_avg(C * OH * OW);
  for (int c = 0; c < C; ++c)
    for (int y = 0; y < OH; ++y)
      for (int x = 0; x < OW; ++x) {
        double m = -INFINITY, t = 0;
        for (int r = 0; r < 2; ++r)
          for (int q = 0; q < 2; ++q) {
            double v = d.at({0, c, y * 2 + r, x * 2 + q});
            m = std::max(m, v);
            t += v;
          }
        want_max[(c * OH + y) * OW + x] = m;
        want_avg[(c * OH + y) * OW + x] = t / 4;
      }
  expect_close(om, want_max);
  expect_close(oa, want_avg);
}

TEST(TeKernels, MinReductionStartsFromPlusInfinity) {
  Tensor A = placeholder({4, 3}, DataType::float32(), "A");
  IterVar k = reduce_axis(0, 3, "k");
  Tensor B = compute(
      {4}, [&](Var i) { return te::min(A(i, k) + 10.0f, {k}); }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B}, "rowmin");
  HostTensor a({4, 3}), b({4});
  fill_random(a, kSeed);
  run(f, {a.ptr(), b.ptr()});
  std::vector<double> want(4);
  for (int i = 0; i < 4; ++i) want[i] = std::min({a.at({i, 0}), a.at({i, 1}), a.at({i, 2})}) + 10.0;
  expect_close(b, want);
}

TEST(TeKernels, SymbolicShapesRunAtSeveralSizesFromOneLowering) {
  Var n = ir::size_var("n"), m = ir::size_var("m");
  Tensor A = placeholder({n, m}, DataType::float32(), "A");
  IterVar k = reduce_axis(0, m, "k");
  Tensor B = compute(
      {n, m}, [&](Var i, Var j) { return A(i, j) * 3.0f; }, "B");
  Tensor R = compute(
      {n}, [&](Var i) { return sum(B(i, k), {k}); }, "R");
  Tensor Y = compute(
      {n, m}, [&](Var i, Var j) { return A(i, j) - R(i); }, "Y");
  Schedule s = create_schedule({Y});
  auto [io, ii] = s[Y].split(Y.axis(0), 4);
  auto [jo, ji] = s[Y].split(Y.axis(1), 3);
  s[Y].reorder(io, jo, ii, ji);
  s[R].compute_at(s[Y], io);
  s[B].compute_at(s[R], R.axis(0));
  tir::PrimFunc f = lower(s, {A, Y}, "symbolic");
  for (auto [nn, mm] : {std::pair{1, 1}, {4, 3}, {5, 7}, {13, 6}}) {
    SCOPED_TRACE(::testing::Message() << "n=" << nn << " m=" << mm);
    HostTensor a({nn, mm}), y({nn, mm});
    fill_random(a, kSeed + static_cast<uint32_t>(nn));
    run(f, {a.ptr(), y.ptr()});
    std::vector<double> want(static_cast<size_t>(nn * mm));
    for (int i = 0; i < nn; ++i) {
      double r = 0;
      for (int j = 0; j < mm; ++j) r += double(a.at({i, j})) * 3.0;
      for (int j = 0; j < mm; ++j) want[i * mm + j] = double(a.at({i, j})) - r;
    }
    expect_close(y, want, 1e-5, 1e-4);
  }
}

TEST(TeKernels, SymbolicMatmulTiled) {
  Var n = ir::size_var("n");
  Tensor A = placeholder({n, n}, DataType::float32(), "A");
  Tensor B = placeholder({n, n}, DataType::float32(), "B");
  IterVar k = reduce_axis(0, n, "k");
  Tensor C = compute(
      {n, n}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
  Schedule s = create_schedule({C});
  Tensor AS = s.cache_read(A, "shared", {C});
  auto [io, jo, ii, ji] = s[C].tile(C.axis(0), C.axis(1), 4, 4);
  auto [ko, ki] = s[C].split(k, 2);
  s[C].reorder(io, jo, ko, ii, ki, ji);
  s[AS].compute_at(s[C], ko);
  s[C].bind(io, "blockIdx.x");
  s[C].bind(jo, "threadIdx.x");
  tir::PrimFunc f = lower(s, {A, B, C}, "matmul_n");
  for (int nn : {1, 3, 8, 10}) {
    SCOPED_TRACE(::testing::Message() << "n=" << nn);
    HostTensor a({nn, nn}), b({nn, nn}), c({nn, nn});
    fill_random(a, kSeed);
    fill_random(b, kSeed + 1);
    run(f, {a.ptr(), b.ptr(), c.ptr()});
    std::vector<double> want(static_cast<size_t>(nn * nn), 0.0);
    for (int i = 0; i < nn; ++i)
      for (int j = 0; j < nn; ++j)
        for (int p = 0; p < nn; ++p) want[i * nn + j] += double(a.at({i, p})) * b.at({p, j});
    expect_close(c, want);
  }
}

}  // namespace
}  // namespace anvil::te
