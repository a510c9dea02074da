// Constant folding semantics per dtype.
#include "anvil/arith/const_fold.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "anvil/arith/simplify.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/printer.h"

namespace anvil::arith {
namespace {

using ir::int_imm;

int64_t fold_i(ir::ExprKind k, int64_t a, int64_t b, DataType t = DataType::int32()) {
  PrimExpr r = fold_binary(k, int_imm(a, t), int_imm(b, t));
  EXPECT_TRUE(r.defined());
  return r.defined() ? *ir::as_const_int(r) : 0;
}

TEST(ConstFold, NegativeDivisionRoundsPerOperator) {
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorDiv, -7, 2), -4);
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorMod, -7, 2), 1);
  EXPECT_EQ(fold_i(ir::ExprKind::kDiv, -7, 2), -3);
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorDiv, 7, -2), -4);
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorMod, 7, -2), -1);
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorMod, -8, 2), 0);
  EXPECT_EQ(fold_i(ir::ExprKind::kDiv, 7, -2), -3);
}

TEST(ConstFold, IntegerArithmeticWrapsToDtype) {
  EXPECT_EQ(fold_i(ir::ExprKind::kAdd, 127, 1, DataType::int8()), -128);
  EXPECT_EQ(fold_i(ir::ExprKind::kMul, 200, 2, DataType::uint8()), 144);
  EXPECT_EQ(fold_i(ir::ExprKind::kSub, 0, 1, DataType::uint16()), 65535);
  EXPECT_EQ(fold_i(ir::ExprKind::kAdd, 2147483647, 1), -2147483648LL);
  EXPECT_EQ(fold_i(ir::ExprKind::kDiv, -2147483648LL, -1), -2147483648LL);
  int64_t mn = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorDiv, mn, -1, DataType::int64()), mn);
  EXPECT_EQ(fold_i(ir::ExprKind::kFloorMod, mn, -1, DataType::int64()), 0);
}

TEST(ConstFold, DivisionByZeroIsNotFolded) {
  EXPECT_FALSE(fold_binary(ir::ExprKind::kDiv, int_imm(1), int_imm(0)).defined());
  EXPECT_FALSE(fold_binary(ir::ExprKind::kFloorMod, int_imm(1), int_imm(0)).defined());
  EXPECT_FALSE(fold_binary(ir::ExprKind::kDiv, ir::float_imm(1), ir::float_imm(0)).defined());
  PrimExpr e = ir::floordiv(ir::int_imm(7), ir::int_imm(0));
  EXPECT_EQ(ir::to_string(simplify(e)), "7 // 0");
}

TEST(ConstFold, UnsignedComparesUnsigned) {
  PrimExpr r = fold_binary(ir::ExprKind::kLT, int_imm(1, DataType::uint32()), int_imm(4294967295LL, DataType::uint32()));
  EXPECT_EQ(*ir::as_const_int(r), 1);
}

TEST(ConstFold, FloatsRoundToTheirPrecision) {
  PrimExpr r = fold_binary(ir::ExprKind::kAdd, ir::float_imm(0.1), ir::float_imm(0.2));
  EXPECT_EQ(r.as<ir::FloatImmNode>()->value(), static_cast<double>(0.1f + 0.2f));
  PrimExpr d = fold_binary(ir::ExprKind::kAdd, ir::float_imm(0.1, DataType::float64()), ir::float_imm(0.2, DataType::float64()));
  EXPECT_EQ(d.as<ir::FloatImmNode>()->value(), 0.1 + 0.2);
  EXPECT_EQ(round_float(DataType::float16(), 1.0 + 1.0 / 4096), 1.0);       // below half an ulp
  EXPECT_EQ(round_float(DataType::float16(), 65520.0), INFINITY);           // rounds past the max
  EXPECT_EQ(round_float(DataType::float16(), 65504.0), 65504.0);
  EXPECT_EQ(round_float(DataType::bfloat16(), 1.0 + 1.0 / 512), 1.0);
  PrimExpr fd = fold_binary(ir::ExprKind::kFloorDiv, ir::float_imm(-7.0), ir::float_imm(2.0));
  EXPECT_EQ(fd.as<ir::FloatImmNode>()->value(), -4.0);
  PrimExpr fm = fold_binary(ir::ExprKind::kFloorMod, ir::float_imm(-7.0), ir::float_imm(2.0));
  EXPECT_EQ(fm.as<ir::FloatImmNode>()->value(), 1.0);
}

// Folding float16/bfloat16 rounds exactly like the evaluator (and so like per-operation half
// arithmetic in generated code): random operands (every bit pattern class), every folding binary
// operator and casts in and out.
TEST(ConstFold, Float16FoldingMatchesTheEvaluator) {
  std::mt19937 rng(11);
  const ir::ExprKind kinds[] = {ir::ExprKind::kAdd, ir::ExprKind::kSub, ir::ExprKind::kMul, ir::ExprKind::kDiv,
                                ir::ExprKind::kMin, ir::ExprKind::kMax, ir::ExprKind::kLT};
  for (DataType t : {DataType::float16(), DataType::bfloat16()}) {
    auto decode = t == DataType::float16() ? ir::half_bits_to_double : ir::bfloat16_bits_to_double;
    ir::Var x("x", t), y("y", t);
    for (int it = 0; it < 5000; ++it) {
      double a = decode(static_cast<uint16_t>(rng())), b = decode(static_cast<uint16_t>(rng()));
      if (std::isnan(a) || std::isnan(b)) continue;
      for (ir::ExprKind k : kinds) {
        PrimExpr folded = fold_binary(k, ir::float_imm(a, t), ir::float_imm(b, t));
        if (!folded.defined()) continue;  // e.g. division by zero
        PrimExpr node = k == ir::ExprKind::kAdd   ? PrimExpr(x + y)
                        : k == ir::ExprKind::kSub ? PrimExpr(x - y)
                        : k == ir::ExprKind::kMul ? PrimExpr(x * y)
                        : k == ir::ExprKind::kDiv ? PrimExpr(x / y)
                        : k == ir::ExprKind::kMin ? ir::min(x, y)
                        : k == ir::ExprKind::kMax ? ir::max(x, y)
                                                  : PrimExpr(x < y);
        double want = ir::eval_float(node, {{x, a}, {y, b}});
        double got = folded.as<ir::FloatImmNode>() ? folded.as<ir::FloatImmNode>()->value()
                                                    : static_cast<double>(*ir::as_const_int(folded));
        if (std::isnan(want))
          ASSERT_TRUE(std::isnan(got));
        else
          ASSERT_EQ(got, want) << ir::dtype_name(t) << " " << ir::to_string(node) << " x=" << a << " y=" << b;
      }
    }
  }
  // Immediates holding more precision than their dtype are read at the dtype's precision.
  PrimExpr s = fold_binary(ir::ExprKind::kAdd, ir::float_imm(2048.0, DataType::float16()),
                           ir::float_imm(1.0, DataType::float16()));
  EXPECT_EQ(s.as<ir::FloatImmNode>()->value(), 2048.0);
  PrimExpr c = fold_cast(DataType::float16(), ir::float_imm(0.1, DataType::float64()));
  EXPECT_EQ(c.as<ir::FloatImmNode>()->value(), ir::round_to_half(0.1));
  EXPECT_EQ(fold_cast(DataType::float16(), int_imm(70000)).as<ir::FloatImmNode>()->value(), INFINITY);
  EXPECT_EQ(*ir::as_const_int(fold_cast(DataType::int32(), ir::float_imm(2049.0, DataType::float16()))), 2048);  // tie to even
  PrimExpr e = fold_call(ir::CallOp::k_exp, {ir::float_imm(1.0, DataType::float16())});
  EXPECT_EQ(e.as<ir::FloatImmNode>()->value(), ir::round_to_half(std::exp(1.0)));
}

TEST(ConstFold, Casts) {
  EXPECT_EQ(*ir::as_const_int(fold_cast(DataType::int8(), int_imm(300))), 44);
  EXPECT_EQ(*ir::as_const_int(fold_cast(DataType::uint8(), int_imm(-1))), 255);
  EXPECT_EQ(*ir::as_const_int(fold_cast(DataType::int32(), ir::float_imm(-2.7))), -2);
  EXPECT_EQ(*ir::as_const_int(fold_cast(ir::bool_type(), int_imm(5))), 1);
  EXPECT_FALSE(fold_cast(DataType::int8(), ir::float_imm(1000.0)).defined());  // UB in C: not folded
  EXPECT_FALSE(fold_cast(DataType::int32(), ir::float_imm(NAN)).defined());
  EXPECT_EQ(fold_cast(DataType::float32(), int_imm(16777217)).as<ir::FloatImmNode>()->value(), 16777216.0);
}

TEST(ConstFold, Intrinsics) {
  PrimExpr e = fold_call(ir::CallOp::k_sqrt, {ir::float_imm(4.0)});
  EXPECT_EQ(e.as<ir::FloatImmNode>()->value(), 2.0);
  PrimExpr a = fold_call(ir::CallOp::k_abs, {int_imm(-5)});
  EXPECT_EQ(*ir::as_const_int(a), 5);
}

// The intrinsics of issue 11 fold exactly as the evaluator computes them (the one definition in
// ir/eval.cc), except where folding would hide a domain error.
TEST(ConstFold, TrigLogClassificationAndBitwiseIntrinsics) {
  using ir::CallOp;
  auto f32 = [](double v) { return ir::float_imm(v, DataType::float32()); };
  auto value = [](const PrimExpr& e) { return e.as<ir::FloatImmNode>()->value(); };
  EXPECT_EQ(value(fold_call(CallOp::k_sin, {f32(0.5)})), double(float(std::sin(double(0.5f)))));
  EXPECT_EQ(value(fold_call(CallOp::k_log10, {ir::float_imm(1000.0, DataType::float64())})), 3.0);
  EXPECT_EQ(value(fold_call(CallOp::k_trunc, {f32(-2.5)})), -2.0);
  EXPECT_EQ(value(fold_call(CallOp::k_copysign, {f32(3), f32(-0.0)})), -3.0);
  EXPECT_FALSE(fold_call(CallOp::k_asin, {f32(2)}).defined());   // NaN from a non-NaN input
  EXPECT_FALSE(fold_call(CallOp::k_acosh, {f32(0)}).defined());
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_isnan, {f32(NAN)})), 1);
  EXPECT_EQ(fold_call(CallOp::k_isinf, {f32(1e39)}).dtype(), ir::bool_type());  // inf in float32
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_isinf, {f32(1e39)})), 1);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_isfinite, {f32(1e39)})), 0);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_bitwise_and, {int_imm(12), int_imm(10)})), 8);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_bitwise_not, {int_imm(0, DataType::uint8())})), 255);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_shift_left, {int_imm(1, DataType::int8()), int_imm(7, DataType::int8())})), -128);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_shift_right, {int_imm(-9), int_imm(40)})), -1);
  EXPECT_EQ(*ir::as_const_int(fold_call(CallOp::k_shift_left, {int_imm(5), int_imm(-1)})), 0);
  EXPECT_FALSE(fold_call(CallOp::k_bitwise_not, {int_imm(0, DataType::uint64())}).defined());  // 2^64 - 1: no int64 immediate
  // Through the simplifier: shift_left(x, 2) of a constant x disappears.
  ir::Var x("x");
  PrimExpr e = ir::shift_left(ir::PrimExpr(3), 2) + x;
  EXPECT_EQ(ir::to_string(simplify(e)), "x + 12");
}

}  // namespace
}  // namespace anvil::arith
