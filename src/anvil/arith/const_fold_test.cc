// Constant folding semantics per dtype.
#include "anvil/arith/const_fold.h"

#include <gtest/gtest.h>

#include <cmath>

#include "anvil/arith/simplify.h"
#include "anvil/ir/expr_ops.h"
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

}  // namespace
}  // namespace anvil::arith
