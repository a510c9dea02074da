// Constant integer bounds, bindings and provers.
#include "anvil/arith/analyzer.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"

namespace anvil::arith {
namespace {

using ir::floordiv;
using ir::floormod;

TEST(ConstIntBound, ArithmeticOnRanges) {
  Analyzer ana;
  Var x("x"), y("y");
  auto s1 = ana.bind(x, 0, 8);   // [0, 7]
  auto s2 = ana.bind(y, -3, 5);  // [-3, 1]
  EXPECT_EQ(ana.const_int_bound(x + y).to_string(), "[-3, 8]");
  EXPECT_EQ(ana.const_int_bound(x - y).to_string(), "[-1, 10]");
  EXPECT_EQ(ana.const_int_bound(x * y).to_string(), "[-21, 7]");
  EXPECT_EQ(ana.const_int_bound(floordiv(y, 2)).to_string(), "[-2, 0]");
  EXPECT_EQ(ana.const_int_bound(y / 2).to_string(), "[-1, 0]");
  EXPECT_EQ(ana.const_int_bound(floormod(y, 4)).to_string(), "[0, 3]");
  EXPECT_EQ(ana.const_int_bound(floormod(x, 16)).to_string(), "[0, 7]");
  EXPECT_EQ(ana.const_int_bound(ir::min(x, y)).to_string(), "[-3, 1]");
  EXPECT_EQ(ana.const_int_bound(ir::max(x, 3)).to_string(), "[3, 7]");
  EXPECT_EQ(ana.const_int_bound(ir::select(x < 3, x, y)).to_string(), "[-3, 7]");
}

TEST(ConstIntBound, UnknownsAndInfinities) {
  Analyzer ana;
  Var x("x", DataType::int64()), n = ir::size_var("n");
  EXPECT_EQ(ana.const_int_bound(x).to_string(), "[-inf, inf]");
  EXPECT_EQ(ana.const_int_bound(n).to_string(), "[0, 2147483647]");
  EXPECT_EQ(ana.const_int_bound(x * 0).to_string(), "[0, 0]");
  EXPECT_EQ(ana.const_int_bound(floormod(x, 5)).to_string(), "[0, 4]");
  EXPECT_EQ(ana.const_int_bound(ir::cast(DataType::int8(), Var("z"))).to_string(), "[-128, 127]");
  EXPECT_EQ(ana.const_int_bound(ir::ramp(n, 2, 4)).to_string(), "[0, 2147483647]");
}

TEST(ConstIntBound, ScopesRestorePreviousKnowledge) {
  Analyzer ana;
  Var x("x");
  {
    auto outer = ana.bind(x, 0, 100);
    {
      auto inner = ana.bind(x, 0, 4);
      EXPECT_EQ(ana.const_int_bound(x).max, 3);
    }
    EXPECT_EQ(ana.const_int_bound(x).max, 99);
    auto cond = ana.assume(x < 10);
    EXPECT_EQ(ana.const_int_bound(x).to_string(), "[0, 9]");
  }
  EXPECT_EQ(ana.lookup(x), nullptr);
}

TEST(Prover, SymbolicLoopRanges) {
  Analyzer ana;
  Var n = ir::size_var("n"), i("i"), j("j");
  auto s1 = ana.bind(i, 0, n);
  EXPECT_TRUE(ana.can_prove(i < n));
  EXPECT_TRUE(ana.can_prove_less(i, n));
  EXPECT_TRUE(ana.can_prove_greater_equal(i, 0));
  EXPECT_FALSE(ana.can_prove(i < n - 1));
  EXPECT_TRUE(ana.can_prove(i + 1 <= n));
  auto s2 = ana.bind(j, 0, 4);
  Var io("io");
  auto s3 = ana.bind(io, 0, floordiv(n, 4));
  EXPECT_TRUE(ana.can_prove(io * 4 + j < n));  // main part of a split loop
  Var it("it");
  auto s4 = ana.bind(it, 0, floordiv(n + 3, 4));
  EXPECT_FALSE(ana.can_prove(it * 4 + j < n));  // the tail needs the condition
  EXPECT_TRUE(ana.can_prove_equal(floormod(j, 4), j));
}

}  // namespace
}  // namespace anvil::arith
