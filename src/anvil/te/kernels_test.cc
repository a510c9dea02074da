// Whole kernels written as tensor expressions, scheduled, lowered, run in the reference TIR
// interpreter and compared with naive double references: broadcast, softmax, batch matmul,
// conv2d NCHW with padding, depthwise conv, pooling, and symbolic shapes at several sizes.
// Inputs: uniform [-1, 1) from seed kSeed (printed on failure); tolerance 1e-5 relative plus
// 1e-5 absolute unless stated.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "anvil/te/reduction.h"
#include "anvil/te/te_test_kernels.h"
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
  BatchMatmul g(3, 5, 6, 7);
  Tensor C = g.C;
  Schedule s = create_schedule({C});
  Tensor CL = s.cache_write(C, "local");
  IterVar bi = s[C].fuse(C.axis(0), C.axis(1));
  s[C].parallel(bi);
  auto [jo, ji] = s[C].split(C.axis(2), 4);
  s[CL].compute_at(s[C], jo);
  s[CL].reorder(CL.reduce_axis(0), CL.axis(2));
  s[CL].vectorize(CL.axis(2));
  tir::PrimFunc f = lower(s, {g.A, g.B, C}, "batch_matmul");
  HostTensor a({3, 5, 7}), bt({3, 7, 6}), c({3, 5, 6});
  fill_random(a, kSeed);
  fill_random(bt, kSeed + 1);
  run(f, {a.ptr(), bt.ptr(), c.ptr()});
  expect_close(c, g.reference(a.data.data(), bt.data.data()));
}

// Runs fn (lowered from g) on random inputs in the interpreter, against g's reference.
void check_conv(const Conv2dNchw& g, const tir::PrimFunc& fn) {
  HostTensor d({g.N, g.C, g.H, g.W}), w({g.K, g.C, g.R, g.S}), o({g.N, g.K, g.OH, g.OW});
  fill_random(d, kSeed);
  fill_random(w, kSeed + 1);
  run(fn, {d.ptr(), w.ptr(), o.ptr()});
  expect_close(o, g.reference(d.data.data(), w.data.data()), 1e-5, 1e-5);
}

TEST(TeKernels, Conv2dNchwPaddedDefaultSchedule) {
  Conv2dNchw g(1, 3, 7, 6, 4, 3, 3, 1, 1);
  Schedule s = create_schedule({g.out});
  check_conv(g, lower(s, {g.data, g.weight, g.out}, "conv2d"));
}

TEST(TeKernels, Conv2dNchwStride2WithInlinedPaddingAndTiles) {
  Conv2dNchw g(2, 2, 9, 8, 3, 3, 3, 1, 2);
  Schedule s = create_schedule({g.out});
  s[g.padded].compute_inline();
  auto [yo, xo, yi, xi] = s[g.out].tile(g.out.axis(2), g.out.axis(3), 2, 3);
  s[g.out].parallel(g.out.axis(1));
  s[g.out].vectorize(xi);
  check_conv(g, lower(s, {g.data, g.weight, g.out}, "conv2d_s2"));
}

TEST(TeKernels, Conv2dPaddingComputedPerOutputRow) {
  Conv2dNchw g(1, 2, 6, 5, 2, 3, 3, 1, 1);
  Schedule s = create_schedule({g.out});
  s[g.padded].compute_at(s[g.out], g.out.axis(2));
  tir::PrimFunc f = lower(s, {g.data, g.weight, g.out}, "conv2d_rows");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("allocate(float32, [1, 2, 3, 7]"), std::string::npos) << text;  // 3 padded rows
  check_conv(g, f);
}

TEST(TeKernels, DepthwiseConvWithPadding) {
  DepthwiseConv g(1, 3, 6, 7, 3, 1);
  Schedule s = create_schedule({g.out});
  s[g.padded].compute_at(s[g.out], g.out.axis(1));
  auto [xo, xi] = s[g.out].split(g.out.axis(3), 4);
  s[g.out].unroll(g.ry);
  tir::PrimFunc f = lower(s, {g.data, g.weight, g.out}, "depthwise");
  HostTensor d({1, 3, 6, 7}), wt({3, 3, 3}), o({1, 3, 6, 7});
  fill_random(d, kSeed);
  fill_random(wt, kSeed + 1);
  run(f, {d.ptr(), wt.ptr(), o.ptr()});
  expect_close(o, g.reference(d.data.data(), wt.data.data()));
}

TEST(TeKernels, MaxAndAveragePooling2x2Stride2) {
  Pool2x2 p(1, 2, 7, 9);  // out 3x4
  Schedule s = create_schedule({p.max_pool, p.avg_pool});
  s[p.sum_pool].compute_at(s[p.avg_pool], p.avg_pool.axis(2));
  auto [xo, xi] = s[p.max_pool].split(p.max_pool.axis(3), 3);
  tir::PrimFunc f = lower(s, {p.data, p.max_pool, p.avg_pool}, "pool");
  HostTensor d({1, 2, 7, 9}), om({1, 2, 3, 4}), oa({1, 2, 3, 4});
  fill_random(d, kSeed);
  run(f, {d.ptr(), om.ptr(), oa.ptr()});
  expect_close(om, p.reference(d.data.data(), true));
  expect_close(oa, p.reference(d.data.data(), false));
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
