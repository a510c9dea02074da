// Modular-set analysis: coeff * k + base for index expressions, checked against brute force.
#include "anvil/arith/modular.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::arith {
namespace {

using ir::floordiv;
using ir::floormod;
using ir::PrimExpr;
using ir::Var;

std::string ms(const PrimExpr& e, const ModularVarMap& vars = {}) { return modular_set(e, vars).to_string(); }

TEST(ModularSet, Rules) {
  Var i("i"), j("j"), n = ir::size_var("n");
  EXPECT_EQ(ms(PrimExpr(7)), "7");
  EXPECT_EQ(ms(i), "1k+0");
  EXPECT_EQ(ms(i * 16), "16k+0");
  EXPECT_EQ(ms(i * 16 + 4), "16k+4");
  EXPECT_EQ(ms(i * 16 - 4), "16k+12");
  EXPECT_EQ(ms(i * 16 + j * 24 + 8), "8k+0");
  EXPECT_EQ(ms((i * 4 + 2) * (j * 6 + 3)), "12k+6");  // 24ij + 12i + 12j + 6
  EXPECT_EQ(ms(i * n), "1k+0");
  EXPECT_EQ(ms(floordiv(i * 16 + 4, 2)), "8k+2");
  EXPECT_EQ(ms(floordiv(i * 16 + 4, 8)), "2k+0");
  EXPECT_EQ(ms(floordiv(i * 6, 4)), "1k+0");
  EXPECT_EQ(ms(floormod(i * 16 + 5, 8)), "5");
  EXPECT_EQ(ms(floormod(i * 6, 4)), "2k+0");
  EXPECT_EQ(ms(floormod(i, j)), "1k+0");
  EXPECT_EQ(ms(ir::min(i * 8, j * 12 + 4)), "4k+0");
  EXPECT_EQ(ms(ir::max(PrimExpr(16), i * 32)), "16k+0");
  EXPECT_EQ(ms(ir::select(i < j, i * 8 + 2, PrimExpr(10))), "8k+2");
  EXPECT_EQ(ms(ir::cast(ir::DataType::int64(), i * 4)), "4k+0");
  EXPECT_EQ(ms(ir::cast(ir::DataType::float32(), i * 4)), "1k+0");
  EXPECT_EQ(ms((i * 4) / 2), "1k+0");  // truncating division: not analysed
  Var x("x");
  EXPECT_EQ(ms(ir::let(x, i * 32, x + 16)), "32k+16");
  EXPECT_EQ(ms(x * 2 + 1, {{x.get(), ModularSet::make(8, 3)}}), "16k+7");
}

TEST(ModularSet, Make) {
  EXPECT_EQ(ModularSet::make(-8, -3), (ModularSet{8, 5}));
  EXPECT_EQ(ModularSet::make(0, -3), (ModularSet{0, -3}));
  EXPECT_EQ(ModularSet::make(4, 9), (ModularSet{4, 1}));
}

TEST(ModularSet, PowerOfTwoFactor) {
  EXPECT_EQ(power_of_two_factor({16, 0}, 64), 16);
  EXPECT_EQ(power_of_two_factor({16, 4}, 64), 4);
  EXPECT_EQ(power_of_two_factor({128, 0}, 64), 64);
  EXPECT_EQ(power_of_two_factor({0, 0}, 64), 64);
  EXPECT_EQ(power_of_two_factor({0, 96}, 64), 32);
  EXPECT_EQ(power_of_two_factor({0, -8}, 64), 8);
  EXPECT_EQ(power_of_two_factor({12, 6}, 64), 2);
  EXPECT_EQ(power_of_two_factor({1, 0}, 64), 1);
}

// Random expressions over two vars: every evaluated value must lie in the computed set.
TEST(ModularSet, RandomSound) {
  std::mt19937 gen(1234);
  Var i("i"), j("j");
  auto pick = [&](int n) { return static_cast<int>(gen() % static_cast<unsigned>(n)); };
  std::function<PrimExpr(int)> make = [&](int depth) -> PrimExpr {
    if (depth == 0 || pick(4) == 0) {
      switch (pick(3)) {
        case 0: return i;
        case 1: return j;
        default: return PrimExpr(pick(41) - 20);
      }
    }
    PrimExpr a = make(depth - 1), b = make(depth - 1);
    int c = pick(8) + 1;
    switch (pick(8)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * PrimExpr(c);
      case 3: return depth <= 2 ? a * b : a + b;  // keeps values far from int32 overflow
      case 4: return floordiv(a, PrimExpr(c));
      case 5: return floormod(a, PrimExpr(c));
      case 6: return ir::min(a, b);
      default: return ir::select(a < b, a, b);
    }
  };
  for (int trial = 0; trial < 300; ++trial) {
    PrimExpr e = make(4);
    ModularSet m = modular_set(e);
    for (int64_t vi = -6; vi <= 6; ++vi)
      for (int64_t vj = -6; vj <= 6; ++vj) {
        int64_t v = ir::eval_int(e, {{i, vi}, {j, vj}});
        if (m.coeff == 0) {
          ASSERT_EQ(v, m.base) << ir::to_string(e);
        } else {
          int64_t r = ((v - m.base) % m.coeff + m.coeff) % m.coeff;
          ASSERT_EQ(r, 0) << ir::to_string(e) << " = " << v << " not in " << m.to_string();
        }
      }
  }
}

}  // namespace
}  // namespace anvil::arith
