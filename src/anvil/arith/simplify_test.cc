// Hand-written simplifier cases (expected text through the IR printer).
#include "anvil/arith/simplify.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::arith {
namespace {

using ir::floordiv;
using ir::floormod;
using ir::to_string;

std::string simp(const PrimExpr& e, const Analyzer& ana = Analyzer()) { return to_string(simplify(e, ana)); }

TEST(Simplify, FoldsConstants) {
  EXPECT_EQ(simp(floordiv(ir::int_imm(-7), ir::int_imm(2))), "-4");
  EXPECT_EQ(simp(floormod(ir::int_imm(-7), ir::int_imm(2))), "1");
  EXPECT_EQ(simp(ir::int_imm(-7) / ir::int_imm(2)), "-3");
  EXPECT_EQ(simp(ir::float_imm(1.5) * ir::float_imm(2.0) + ir::float_imm(1.0)), "4.0f");
  EXPECT_EQ(simp(ir::cast(DataType::float32(), ir::int_imm(3)) < ir::float_imm(3.5)), "True");
}

TEST(Simplify, CollectsLikeTerms) {
  Var i("i"), j("j"), x("x");
  EXPECT_EQ(simp((i * 4 + j) - i * 4), "j");
  EXPECT_EQ(simp(x * 2 + x), "x * 3");
  EXPECT_EQ(simp(x - x), "0");
  EXPECT_EQ(simp((x + 3) - (x + 1)), "2");
  EXPECT_EQ(simp(j - i * 4 + 5), "j - i * 4 + 5");
  EXPECT_EQ(simp((i + 1) * 4 - 4), "i * 4");
  EXPECT_EQ(simp((i + j) * (i - j) + j * j), "i * i");
  EXPECT_EQ(simp(0 - x), "x * -1");
  EXPECT_EQ(simp(3 - x - 1), "2 - x");
}

TEST(Simplify, FloorDivModWithNegativeNumbers) {
  Var x("x"), y("y");
  EXPECT_EQ(simp(floordiv(x * 8 + y, 8)), "x + y // 8");
  EXPECT_EQ(simp(floormod(x * 8 + y, 8)), "y % 8");
  EXPECT_EQ(simp(floordiv(x * 8 - 1, 8)), "x - 1");  // floordiv(-1, 8) == -1: no bound needed
  EXPECT_EQ(simp(floormod(x * 8 - 1, 8)), "7");
  Analyzer ana;
  auto s = ana.bind(y, 0, 8);
  EXPECT_EQ(simp(floordiv(x * 8 + y, 8), ana), "x");
  EXPECT_EQ(simp(floormod(x * 8 + y, 8), ana), "y");
  EXPECT_EQ(simp(floordiv(floordiv(x, 2), 4)), "x // 8");
  EXPECT_EQ(simp(floormod(floormod(x, 16), 4)), "x % 4");
  EXPECT_EQ(simp(floordiv(x, 4) * 4 + floormod(x, 4)), "x");
  EXPECT_EQ(simp(x - floordiv(x, 4) * 4), "x % 4");
}

TEST(Simplify, TruncatingDivisionNeedsNonNegativity) {
  Var x("x"), y("y");
  EXPECT_EQ(simp((x * 8 + y) / 8), "truncdiv(x * 8 + y, 8)");  // x*8+y may be negative
  Analyzer ana;
  auto sx = ana.bind(x, 0, 100);
  auto sy = ana.bind(y, 0, 8);
  EXPECT_EQ(simp((x * 8 + y) / 8, ana), "x");
}

TEST(Simplify, MinMaxSelectFromBounds) {
  Var x("x"), n = ir::size_var("n"), i("i");
  EXPECT_EQ(simp(ir::min(x, x + 1)), "x");
  EXPECT_EQ(simp(ir::max(x, x + 1)), "x + 1");
  EXPECT_EQ(simp(ir::min(ir::min(x, 3), 5)), "min(x, 3)");
  EXPECT_EQ(simp(ir::min(7, x)), "min(x, 7)");
  EXPECT_EQ(simp(ir::min(floordiv(x, 4), floordiv(x + 3, 4))), "x // 4");
  Analyzer ana;
  auto s = ana.bind(i, 0, n);
  EXPECT_EQ(simp(i < n, ana), "True");
  EXPECT_EQ(simp(i >= n, ana), "False");
  EXPECT_EQ(simp(ir::min(i, n), ana), "i");
  EXPECT_EQ(simp(ir::select(i < n, i, 0), ana), "i");
  EXPECT_EQ(simp(ir::select(x < 0, x, x)), "x");
}

TEST(Simplify, ComparisonsMoveConstantsRight) {
  Var x("x"), n("n");
  EXPECT_EQ(simp(x + 1 < 5), "x < 4");
  EXPECT_EQ(simp(x * 4 + 3 < n), "x * 4 < n - 3");
  EXPECT_EQ(simp(x * 4 + Var("j") < n), "x * 4 + j < n");
  EXPECT_EQ(simp(ir::eq(x + 1, x + 1)), "True");
  EXPECT_EQ(simp(ir::ne(x + 1, x)), "True");
}

TEST(Simplify, Booleans) {
  Var x("x"), b("b", ir::bool_type());
  EXPECT_EQ(simp(b && ir::bool_imm(true)), "b");
  EXPECT_EQ(simp(b || ir::bool_imm(true)), "True");
  EXPECT_EQ(simp(b && !b), "False");
  EXPECT_EQ(simp(!!b), "b");
  EXPECT_EQ(simp(!(x < 3)), "x >= 3");
  EXPECT_EQ(simp(!(ir::float_imm(1.0) < Var("f", DataType::float32()))), "not 1.0f < f");
}

TEST(Simplify, VectorsRampsAndBroadcasts) {
  Var x("x"), i("i");
  EXPECT_EQ(simp(ir::broadcast(x, 4) + ir::broadcast(x, 4)), "broadcast(x * 2, 4)");
  EXPECT_EQ(simp(ir::ramp(x, 1, 4) + ir::ramp(i, 2, 4)), "ramp(x + i, 3, 4)");
  EXPECT_EQ(simp(ir::ramp(x, 1, 4) * ir::broadcast(ir::int_imm(2), 4)), "ramp(x * 2, 2, 4)");
  EXPECT_EQ(simp(ir::ramp(x, 1, 4) - ir::ramp(x, 1, 4)), "broadcast(0, 4)");
  EXPECT_EQ(simp(floordiv(ir::ramp(i * 4, 1, 4), ir::broadcast(ir::int_imm(4), 4))), "broadcast(i, 4)");
  EXPECT_EQ(simp(floormod(ir::ramp(i * 8, 1, 4), ir::broadcast(ir::int_imm(8), 4))), "ramp(0, 1, 4)");
  Analyzer ana;
  auto s = ana.bind(i, 0, 4);
  EXPECT_EQ(simp(ir::ramp(i * 4, 1, 4) < ir::broadcast(ir::int_imm(16), 4), ana), "broadcast(True, 4)");
}

TEST(Simplify, CastsAndLets) {
  Var x("x"), y("y");
  EXPECT_EQ(simp(ir::cast(DataType::int32(), x)), "x");
  EXPECT_EQ(simp(ir::cast(ir::with_lanes(DataType::float32(), 4), ir::broadcast(ir::int_imm(2), 4))), "broadcast(2.0f, 4)");
  EXPECT_EQ(simp(ir::let(y, ir::int_imm(3), x + y - 3)), "x");
}

TEST(Simplify, UnchangedExpressionIsTheSameNode) {
  Var x("x"), n("n");
  PrimExpr e = x * 4 + n;
  EXPECT_TRUE(simplify(e).same_as(e));
}

}  // namespace
}  // namespace anvil::arith
