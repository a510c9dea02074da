// The reference interpreter runs PrimFuncs on host tensors.
#include "anvil/tir/interpreter.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/base/error.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/printer.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using ir::decl_buffer;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }

ErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorKind::kInternal;
}

// C[i, j] = sum_k A[i, k] * B[k, j] over symbolic n, m, k.
PrimFunc matmul() {
  Var n = ir::size_var("n"), m = ir::size_var("m"), k = ir::size_var("k");
  Buffer A = decl_buffer({n, k}, DataType::float32(), "A");
  Buffer B = decl_buffer({k, m}, DataType::float32(), "B");
  Buffer C = decl_buffer({n, m}, DataType::float32(), "C");
  Var i("i"), j("j"), kk("kk");
  Stmt update = buffer_store(C, buffer_load(C, {i, j}) + buffer_load(A, {i, kk}) * buffer_load(B, {kk, j}), {i, j});
  Stmt body = make_for(i, 0, n, make_for(j, 0, m, seq({buffer_store(C, 0, {i, j}), make_for(kk, 0, k, update)})),
                       ForKind::kParallel);
  return make_prim_func("matmul", {A, B, C}, body);
}

TEST(Interpreter, MatmulWithSymbolicShapesMatchesReference) {
  const uint32_t seed = 1234;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  PrimFunc f = matmul();
  for (auto [n, m, k] : {std::tuple{3, 5, 7}, std::tuple{1, 1, 1}, std::tuple{8, 2, 4}}) {
    Tensor A = Tensor::empty({n, k}, DataType::float32()), B = Tensor::empty({k, m}, DataType::float32());
    Tensor C = Tensor::empty({n, m}, DataType::float32());
    for (int x = 0; x < n * k; ++x) f32(A)[x] = dist(rng);
    for (int x = 0; x < k * m; ++x) f32(B)[x] = dist(rng);
    run_prim_func(f, {A.dl(), B.dl(), C.dl()});
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < m; ++j) {
        float want = 0;
        for (int kk = 0; kk < k; ++kk) want += f32(A)[i * k + kk] * f32(B)[kk * m + j];
        ASSERT_NEAR(f32(C)[i * m + j], want, 1e-5) << i << "," << j;
      }
  }
}

TEST(Interpreter, VectorLoadsStoresLocalAllocationAndScalarParam) {
  // B[4*o : 4*o+4] = T + alpha, where T (local) = A[4*o : 4*o+4] * 2, ramp indices.
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Buffer B = decl_buffer({16}, DataType::float32(), "B");
  Var t("T", ir::handle_type());
  Buffer T = Buffer::make(t, DataType::float32(), {4}, {}, {}, "T", 64, "local");
  Var o("o"), alpha("alpha", DataType::float32());
  PrimExpr vec = ir::ramp(o * 4, 1, 4);
  Stmt body =
      make_for(o, 0, 4,
               allocate(t, DataType::float32(), {4}, "local",
                        seq({buffer_store(T, buffer_load(A, {vec}) * 2, {ir::ramp(0, 1, 4)}),
                             buffer_store(B, buffer_load(T, {ir::ramp(0, 1, 4)}) + ir::broadcast(alpha, 4), {vec})})));
  PrimFunc f = make_prim_func("vec", {A, B, alpha}, body);
  Tensor a = Tensor::empty({16}, DataType::float32()), b = Tensor::empty({16}, DataType::float32());
  for (int i = 0; i < 16; ++i) f32(a)[i] = static_cast<float>(i);
  run_prim_func(f, {a.dl(), b.dl(), 0.5});
  for (int i = 0; i < 16; ++i) EXPECT_EQ(f32(b)[i], 2.0f * i + 0.5f) << i;
}

TEST(Interpreter, IntegerKernelWithLetIfAndSelect) {
  Var n = ir::size_var("n");
  Buffer X = decl_buffer({n}, DataType::int32(), "X");
  Buffer Y = decl_buffer({n}, DataType::int64(), "Y");
  Var i("i"), v("v");
  Stmt body =
      make_for(i, 0, n,
               let_stmt(v, buffer_load(X, {i}),
                        if_then_else(ir::eq(floormod(v, 2), 0),
                                     buffer_store(Y, ir::cast(DataType::int64(), floordiv(v, 2)), {i}),
                                     buffer_store(Y, ir::cast(DataType::int64(), ir::select(v < 0, -v, v)), {i}))));
  PrimFunc f = make_prim_func("collatz_ish", {X, Y}, body);
  Tensor x = Tensor::empty({5}, DataType::int32()), y = Tensor::empty({5}, DataType::int64());
  int32_t in[] = {4, -3, 7, -8, 0};
  std::memcpy(x.data(), in, sizeof(in));
  run_prim_func(f, {x.dl(), y.dl()});
  int64_t want[] = {2, 3, 7, -4, 0};
  for (int k = 0; k < 5; ++k) EXPECT_EQ(static_cast<int64_t*>(y.data())[k], want[k]) << k;
}

TEST(Interpreter, ReadmeExamplePrintsAndRuns) {
  Var n = ir::size_var("n"), i("i");
  Buffer A = ir::decl_buffer({n}, DataType::float32(), "A");
  Buffer B = ir::decl_buffer({n}, DataType::float32(), "B");
  Stmt body = make_for(i, 0, n, buffer_store(B, ir::buffer_load(A, {i}) * 2.0, {i}), ForKind::kParallel);
  PrimFunc f = make_prim_func("scale", {A, B}, body);
  EXPECT_EQ(to_string(f),
            "func scale(A: Buffer(float32, [n]), B: Buffer(float32, [n])):\n"
            "  for i in range(0, n) parallel:\n"
            "    B[i] = A[i] * 2.0f\n");
  Tensor a = Tensor::empty({8}, DataType::float32()), b = Tensor::empty({8}, DataType::float32());
  for (int k = 0; k < 8; ++k) f32(a)[k] = static_cast<float>(k);
  run_prim_func(f, {a.dl(), b.dl()});
  for (int k = 0; k < 8; ++k) EXPECT_EQ(f32(b)[k], 2.0f * k);
}

// Random integer expressions of X[i] and i: the interpreter (through loads and stores) must agree
// with the evaluator (through bindings).
PrimExpr random_int_expr(std::mt19937& rng, const PrimExpr& x, const PrimExpr& i, int depth) {
  int k = depth <= 0 ? static_cast<int>(rng() % 3) : static_cast<int>(rng() % 9);
  auto sub = [&] { return random_int_expr(rng, x, i, depth - 1); };
  switch (k) {
    case 0:
      return x;
    case 1:
      return i;
    case 2:
      return PrimExpr(static_cast<int>(rng() % 9) - 4);
    case 3:
      return sub() + sub();
    case 4:
      return sub() * sub();
    case 5:
      return floordiv(sub(), ir::max(sub(), 1));
    case 6:
      return floormod(sub(), ir::max(sub(), 1));
    case 7:
      return ir::select(sub() < sub(), sub(), sub());
    default:
      return ir::min(sub(), sub()) - sub();
  }
}

TEST(Interpreter, AgreesWithEvaluatorOnRandomExpressions) {
  const uint32_t seed = 99;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const int n = 16;
  Tensor xs = Tensor::empty({n}, DataType::int32()), ys = Tensor::empty({n}, DataType::int32());
  for (int k = 0; k < n; ++k) static_cast<int32_t*>(xs.data())[k] = static_cast<int32_t>(rng() % 41) - 20;
  for (int trial = 0; trial < 60; ++trial) {
    Buffer X = decl_buffer({n}, DataType::int32(), "X");
    Buffer Y = decl_buffer({n}, DataType::int32(), "Y");
    Var i("i"), xv("xv");
    PrimExpr e = random_int_expr(rng, xv, i, 4);
    PrimFunc f =
        make_prim_func("rand", {X, Y}, make_for(i, 0, n, let_stmt(xv, buffer_load(X, {i}), buffer_store(Y, e, {i}))));
    run_prim_func(f, {xs.dl(), ys.dl()});
    for (int k = 0; k < n; ++k) {
      int64_t want = ir::eval_int(e, {{i, int64_t{k}}, {xv, int64_t{static_cast<int32_t*>(xs.data())[k]}}});
      ASSERT_EQ(static_cast<int32_t*>(ys.data())[k], want) << to_string(e) << " at i=" << k;
    }
  }
}

// ---- float16 / bfloat16 ----------------------------------------------------------------------

uint16_t* u16(Tensor& t) { return static_cast<uint16_t*>(t.data()); }

// A tensor of random 16-bit floats (values drawn in [lo, hi), rounded to the type).
Tensor random_16(int64_t n, DataType t, std::mt19937& rng, double lo = -4, double hi = 4) {
  Tensor x = Tensor::empty({n}, t);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < n; ++i)
    u16(x)[i] = t == DataType::float16() ? ir::double_to_half_bits(dist(rng)) : ir::double_to_bfloat16_bits(dist(rng));
  return x;
}

// C[i] = (A[i] * B[i] + A[i]) / (B[i] - alpha) and D[i] = float32(A[i]) * 3, elementwise on a
// 16-bit float type; the reference rounds after every step.
TEST(Interpreter, Float16ElementwiseRoundsEveryStep) {
  std::mt19937 rng(4242);
  for (DataType t : {DataType::float16(), DataType::bfloat16()}) {
    auto round16 = [&](double v) { return t == DataType::float16() ? ir::round_to_half(v) : ir::round_to_bfloat16(v); };
    auto decode = t == DataType::float16() ? ir::half_bits_to_double : ir::bfloat16_bits_to_double;
    Var n = ir::size_var("n"), i("i"), alpha("alpha", t);
    Buffer A = decl_buffer({n}, t, "A"), B = decl_buffer({n}, t, "B"), C = decl_buffer({n}, t, "C");
    Buffer D = decl_buffer({n}, DataType::float32(), "D");
    PrimExpr a = buffer_load(A, {i}), b = buffer_load(B, {i});
    Stmt body = make_for(i, 0, n,
                         seq({buffer_store(C, (a * b + a) / (b - alpha), {i}),
                              buffer_store(D, ir::cast(DataType::float32(), a) * 3.0f, {i})}));
    PrimFunc f = make_prim_func("ew16", {A, B, C, D, alpha}, body);
    const int64_t len = 1000;
    Tensor ta = random_16(len, t, rng), tb = random_16(len, t, rng), tc = Tensor::empty({len}, t);
    Tensor td = Tensor::empty({len}, DataType::float32());
    const double al = 0.3;  // rounded to t when bound
    run_prim_func(f, {ta.dl(), tb.dl(), tc.dl(), td.dl(), al});
    double alr = round16(al);
    for (int64_t k = 0; k < len; ++k) {
      double va = decode(u16(ta)[k]), vb = decode(u16(tb)[k]);
      double want = round16(round16(round16(va * vb) + va) / round16(vb - alr));
      double got = decode(u16(tc)[k]);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(got)) << ir::dtype_name(t) << " " << k;
      else
        ASSERT_EQ(got, want) << ir::dtype_name(t) << " " << k << ": a=" << va << " b=" << vb;
      ASSERT_EQ(f32(td)[k], static_cast<float>(va) * 3.0f);
    }
  }
}

// S[r] = sum_k A[r, k] accumulated in float16 (rounded after every add), and M[r] the same sum
// accumulated in float32 and cast to float16 at the end.
TEST(Interpreter, Float16ReductionAccumulatesInItsType) {
  std::mt19937 rng(777);
  const int rows = 7, cols = 300;
  Buffer A = decl_buffer({rows, cols}, DataType::float16(), "A");
  Buffer S = decl_buffer({rows}, DataType::float16(), "S");
  Buffer M = decl_buffer({rows}, DataType::float16(), "M");
  Var r("r"), k("k"), acc_var("acc", ir::handle_type());
  Buffer Acc = Buffer::make(acc_var, DataType::float32(), {1}, {}, {}, "acc", 64, "local");
  PrimExpr a = buffer_load(A, {r, k});
  Stmt body = make_for(
      r, 0, rows,
      allocate(acc_var, DataType::float32(), {1}, "local",
               seq({buffer_store(S, ir::float_imm(0, DataType::float16()), {r}), buffer_store(Acc, 0.0f, {0}),
                    make_for(k, 0, cols,
                             seq({buffer_store(S, buffer_load(S, {r}) + a, {r}),
                                  buffer_store(Acc, buffer_load(Acc, {0}) + ir::cast(DataType::float32(), a), {0})})),
                    buffer_store(M, ir::cast(DataType::float16(), buffer_load(Acc, {0})), {r})})));
  PrimFunc f = make_prim_func("sum16", {A, S, M}, body);
  Tensor ta = Tensor::empty({rows, cols}, DataType::float16());
  std::uniform_real_distribution<double> dist(0, 8);  // positive: the float16 sum loses bits as it grows
  for (int x = 0; x < rows * cols; ++x) u16(ta)[x] = ir::double_to_half_bits(dist(rng));
  Tensor ts = Tensor::empty({rows}, DataType::float16()), tm = Tensor::empty({rows}, DataType::float16());
  run_prim_func(f, {ta.dl(), ts.dl(), tm.dl()});
  int differs = 0;
  for (int row = 0; row < rows; ++row) {
    double acc16 = 0, exact = 0;
    float acc32 = 0;
    for (int c = 0; c < cols; ++c) {
      double v = ir::half_bits_to_double(u16(ta)[row * cols + c]);
      acc16 = ir::round_to_half(acc16 + v);
      acc32 += static_cast<float>(v);
      exact += v;
    }
    EXPECT_EQ(ir::half_bits_to_double(u16(ts)[row]), acc16) << row;
    EXPECT_EQ(u16(tm)[row], ir::double_to_half_bits(acc32)) << row;
    differs += acc16 != ir::round_to_half(exact);
  }
  EXPECT_GT(differs, 0);  // the per-step rounding is visible
}

TEST(Interpreter, OutOfBoundsAccessIsIndexError) {
  Buffer A = decl_buffer({4}, DataType::float32(), "A");
  Var i("i");
  PrimFunc f = make_prim_func("oob", {A}, make_for(i, 0, 5, buffer_store(A, 1, {i})));
  Tensor a = Tensor::empty({4}, DataType::float32());
  try {
    run_prim_func(f, {a.dl()});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIndex);
    EXPECT_NE(std::string(e.what()).find("A[4]"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, ArgumentMismatchesAreReported) {
  PrimFunc f = matmul();
  Tensor A = Tensor::empty({2, 3}, DataType::float32()), B = Tensor::empty({4, 2}, DataType::float32());
  Tensor C = Tensor::empty({2, 2}, DataType::float32());
  EXPECT_EQ(kind_of([&] { run_prim_func(f, {A.dl(), B.dl(), C.dl()}); }), ErrorKind::kValue);  // k: 3 vs 4
  Tensor Bi = Tensor::empty({3, 2}, DataType::int32());
  EXPECT_EQ(kind_of([&] { run_prim_func(f, {A.dl(), Bi.dl(), C.dl()}); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { run_prim_func(f, {A.dl(), B.dl()}); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { run_prim_func(f, {A.dl(), int64_t{3}, C.dl()}); }), ErrorKind::kType);
}

}  // namespace
}  // namespace anvil::tir
