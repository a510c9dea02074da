// Reference evaluator semantics.
#include "anvil/ir/eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/printer.h"

namespace anvil::ir {
namespace {

TEST(Eval, IntegerArithmeticWithBindings) {
  Var i("i"), j("j");
  EXPECT_EQ(eval_int(i * 3 + j, {{i, int64_t{4}}, {j, int64_t{-2}}}), 10);
  EXPECT_EQ(eval_int(min(i, j) - max(i, j), {{i, int64_t{4}}, {j, int64_t{-2}}}), -6);
  EXPECT_EQ(eval_int(i < j, {{i, int64_t{1}}, {j, int64_t{2}}}), 1);
  EXPECT_EQ(eval_int(logical_and(i < j, !(j < i)), {{i, int64_t{1}}, {j, int64_t{2}}}), 1);
}

TEST(Eval, DivisionFlavoursMatchCAndPython) {
  Var a("a"), b("b");
  auto at = [&](const PrimExpr& e, int64_t x, int64_t y) { return eval_int(e, {{a, x}, {b, y}}); };
  EXPECT_EQ(at(a / b, -7, 2), -3);
  EXPECT_EQ(at(floordiv(a, b), -7, 2), -4);
  EXPECT_EQ(at(floormod(a, b), -7, 2), 1);
  EXPECT_EQ(at(floormod(a, b), 7, -2), -1);
  EXPECT_EQ(at(floordiv(a, b), 7, -2), -4);
  EXPECT_EQ(at(floordiv(a, b), 6, 3), 2);
  EXPECT_THROW(at(floordiv(a, b), 1, 0), Error);
}

TEST(Eval, IntegersWrapToTheirWidth) {
  Var a("a"), u("u", DataType::uint8());
  EXPECT_EQ(eval_int(a + 1, {{a, int64_t{2147483647}}}), -2147483648LL);
  EXPECT_EQ(eval_int(u + 1, {{u, int64_t{255}}}), 0);
  EXPECT_EQ(eval_int(u - 1, {{u, int64_t{0}}}), 255);
  Var big("big", DataType::uint64());
  EXPECT_EQ(eval_int(big > 1, {{big, int64_t{-1}}}), 1);  // 2^64-1 > 1 when unsigned
}

TEST(Eval, FloatsCastsAndIntrinsics) {
  Var x("x", DataType::float32()), i("i");
  EXPECT_FLOAT_EQ(eval_float(x * 2 + 1, {{x, 1.25}}), 3.5);
  EXPECT_EQ(eval_float(x + 0.1, {{x, 0.0}}), static_cast<double>(0.1f));  // float32 rounding
  EXPECT_EQ(eval_int(cast(DataType::int32(), x), {{x, -2.7}}), -2);
  EXPECT_EQ(eval_int(cast(bool_type(), x), {{x, 0.5}}), 1);
  EXPECT_EQ(eval_int(cast(DataType::int8(), i), {{i, int64_t{300}}}), 44);
  EXPECT_FLOAT_EQ(eval_float(sigmoid(x), {{x, 0.0}}), 0.5);
  EXPECT_FLOAT_EQ(eval_float(rsqrt(x), {{x, 4.0}}), 0.5);
  EXPECT_EQ(eval_float(round(x), {{x, 2.5}}), 2.0);  // half to even
  EXPECT_FLOAT_EQ(eval_float(fma(x, x, 1), {{x, 3.0}}), 10.0);
  EXPECT_EQ(eval_int(abs(i), {{i, int64_t{-5}}}), 5);
  EXPECT_FLOAT_EQ(eval_float(floordiv(x, 2), {{x, -3.0}}), -2.0);
  EXPECT_THROW(eval_int(cast(DataType::int32(), x), {{x, std::nan("")}}), Error);
}

// float8 / float4 (ir/minifloat.h) round like the generated code: nearest even, overflow to inf
// (e5m2), NaN (e4m3fn, the fnuz types) or the largest value (float4); no -0 in the fnuz types.
TEST(Eval, Float8AndFloat4Round) {
  Var x("x", DataType::float32());
  auto to = [&](DataType t, double v) { return eval_float(cast(DataType::float32(), cast(t, x)), {{x, v}}); };
  EXPECT_EQ(to(DataType::float8_e4m3fn(), 3.3), 3.25);
  EXPECT_EQ(to(DataType::float8_e4m3fn(), 464), 448.0);  // a tie: 448 is the even code
  EXPECT_TRUE(std::isnan(to(DataType::float8_e4m3fn(), 465)));
  EXPECT_EQ(to(DataType::float8_e4m3fn(), std::ldexp(1.0, -10)), 0.0);  // half the smallest subnormal: even
  EXPECT_EQ(to(DataType::float8_e4m3fn(), std::ldexp(3.0, -11)), std::ldexp(1.0, -9));
  EXPECT_EQ(to(DataType::float8_e5m2(), 61440), INFINITY);  // a tie with the step to inf
  EXPECT_EQ(to(DataType::float8_e5m2(), -61439), -57344.0);
  EXPECT_TRUE(std::isnan(to(DataType::float8_e5m2fnuz(), 1e6)));
  EXPECT_FALSE(std::signbit(to(DataType::float8_e4m3fnuz(), -1e-9)));
  EXPECT_TRUE(std::signbit(to(DataType::float8_e4m3fn(), -1e-9)));
  EXPECT_EQ(to(DataType::float4_e2m1fn(), 0.75), 1.0);
  EXPECT_EQ(to(DataType::float4_e2m1fn(), 100), 6.0);
  EXPECT_EQ(to(DataType::float4_e2m1fn(), -5), -4.0);  // tie between 4 (even code) and 6
}

// float8_e8m0fnu: powers of two alone, a tie (1.5 * 2^e) up as ml_dtypes rounds; no zero, no sign.
TEST(Eval, Float8E8M0RoundsToAPowerOfTwo) {
  Var x("x", DataType::float32());
  const DataType e8m0 = DataType::float8_e8m0fnu();
  auto to = [&](double v) { return eval_float(cast(DataType::float32(), cast(e8m0, x)), {{x, v}}); };
  EXPECT_EQ(to(1.49), 1.0);
  EXPECT_EQ(to(1.5), 2.0);
  EXPECT_EQ(to(3.0), 4.0);  // 4's code 129 is odd: not to even
  EXPECT_EQ(to(0.124), 0.125);
  EXPECT_EQ(to(1e-45), std::ldexp(1.0, -127));  // below the smallest: the smallest
  EXPECT_EQ(to(std::ldexp(3.0, -128)), std::ldexp(1.0, -126));
  EXPECT_EQ(to(std::ldexp(1.0, 127)), std::ldexp(1.0, 127));
  for (double v : {0.0, -0.0, -2.0, 1.5 * std::ldexp(1.0, 127), double(INFINITY), std::nan("")})
    EXPECT_TRUE(std::isnan(to(v))) << v;
}

TEST(Eval, Float16AndBFloat16RoundAfterEveryOperation) {
  Var h("h", DataType::float16()), x("x", DataType::float32()), b("b", DataType::bfloat16());
  EXPECT_EQ(eval_float((h + 1) + 1, {{h, 2048.0}}), 2048.0);  // each + 1 ties back to even; double says 2050
  EXPECT_EQ(eval_float(h + 2, {{h, 2048.0}}), 2050.0);
  EXPECT_EQ(eval_float(h * h, {{h, 300.0}}), INFINITY);                   // 90000 > 65504
  EXPECT_EQ(eval_float(h * h, {{h, std::ldexp(1.0, -12)}}), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(eval_float(h * h, {{h, std::ldexp(1.0, -13)}}), 0.0);         // underflows
  EXPECT_EQ(eval_float(h / 3, {{h, 1.0}}), round_to_half(1.0 / 3));
  EXPECT_EQ(eval_float(h, {{h, 0.1}}), round_to_half(0.1));               // binding rounds
  EXPECT_EQ(eval_float(cast(DataType::float16(), x), {{x, 0.1}}), round_to_half(0.1f));
  EXPECT_EQ(eval_float(cast(DataType::float16(), x), {{x, 1e6}}), INFINITY);
  EXPECT_EQ(eval_float(sqrt(h), {{h, 2.0}}), round_to_half(std::sqrt(2.0)));  // intrinsics too
  EXPECT_TRUE(std::isnan(eval_float(h - h, {{h, INFINITY}})));
  EXPECT_EQ(eval_float(h + float_imm(0.1, DataType::float16()), {{h, 0.0}}), round_to_half(0.1));  // immediates
  EXPECT_EQ(eval_float(b + 1, {{b, 256.0}}), 256.0);  // 8 significant bits
  EXPECT_EQ(eval_float(b * 3, {{b, 1.0 / 3}}), round_to_bfloat16(3 * round_to_bfloat16(1.0 / 3)));
  EXPECT_EQ(eval_float(b * b, {{b, 1e30}}), INFINITY);

  // Random float16 operands: every + - * / equals the exact result rounded once.
  std::mt19937 rng(7);
  Var a("a", DataType::float16()), c("c", DataType::float16());
  PrimExpr ops[] = {a + c, a - c, a * c, a / c};
  for (int it = 0; it < 20000; ++it) {
    double va = half_bits_to_double(static_cast<uint16_t>(rng())), vc = half_bits_to_double(static_cast<uint16_t>(rng()));
    double exact[] = {va + vc, va - vc, va * vc, va / vc};
    for (int k = 0; k < 4; ++k) {
      double got = eval_float(ops[k], {{a, va}, {c, vc}}), want = round_to_half(exact[k]);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(got));
      else
        ASSERT_EQ(got, want) << to_string(ops[k]) << " a=" << va << " c=" << vc;
    }
  }
}

TEST(Eval, SelectLetAndErrors) {
  Var i("i"), t("t");
  EXPECT_EQ(eval_int(select(i > 0, i, -i), {{i, int64_t{-3}}}), 3);
  EXPECT_EQ(eval_int(let(t, i + 1, t * t), {{i, int64_t{2}}}), 9);
  EXPECT_THROW(eval_int(i + 1), Error);  // unbound
  EXPECT_THROW(eval_int(float_imm(1.0)), Error);
  Buffer A = decl_buffer({4}, DataType::int32(), "A");
  EXPECT_THROW(eval_int(buffer_load(A, {0})), Error);
}

TEST(Eval, VectorsLaneByLane) {
  Var i("i");
  Evaluator ev;
  ev.bind(i, EvalValue::of_int(10, DataType::int32()));
  EvalValue r = ev.eval(ramp(i, 2, 4) * 3 + broadcast(i, 4));
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_EQ(r.as_int(0), 40);
  EXPECT_EQ(r.as_int(3), 58);
  EvalValue c = ev.eval(ramp(0, 1, 4) < 2);
  EXPECT_EQ(c.dtype, bool_type(4));
  EXPECT_EQ(c.as_int(1), 1);
  EXPECT_EQ(c.as_int(2), 0);
}

TEST(Eval, FloorDivModIdentityHoldsOnRandomInputs) {
  const uint32_t seed = 7;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> dist(-1000, 1000);
  Var a("a"), b("b");
  PrimExpr identity = floordiv(a, b) * b + floormod(a, b);
  for (int k = 0; k < 1000; ++k) {
    int64_t x = dist(rng), y = dist(rng);
    if (y == 0) continue;
    ASSERT_EQ(eval_int(identity, {{a, x}, {b, y}}), x) << x << " " << y;
    int64_t m = eval_int(floormod(a, b), {{a, x}, {b, y}});
    ASSERT_TRUE(y > 0 ? (m >= 0 && m < y) : (m <= 0 && m > y)) << x << " " << y;
  }
}

}  // namespace
}  // namespace anvil::ir
