// Interval evaluation (interval.h) against the evaluator and against Analyzer::const_int_bound,
// the other interval arithmetic of this folder: on random index expressions over relaxed loop
// variables every value lies inside the interval, and where both analyses are exact (each
// variable used once, division by positive constants) they give the same interval.
#include "anvil/arith/interval.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

#include "anvil/arith/analyzer.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::arith {
namespace {

using ir::floordiv;
using ir::floormod;

unsigned seed() {
  const char* env = std::getenv("ANVIL_INTERVAL_SEED");
  unsigned s = env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 20261201u;
  std::printf("interval test seed: %u (ANVIL_INTERVAL_SEED=n to vary)\n", s);
  return s;
}

TEST(Interval, ContainsEveryValueOfRandomIndexExpressions) {
  std::mt19937 rng(seed());
  Var i("i"), j("j"), k("k");
  const Var vars[] = {i, j, k};
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::function<PrimExpr(int)> gen = [&](int depth) -> PrimExpr {
    if (depth == 0 || pick(4) == 0) return pick(3) ? PrimExpr(vars[pick(3)]) : PrimExpr(pick(21) - 10);
    PrimExpr a = gen(depth - 1), b = gen(depth - 1);
    int c = 1 + pick(7);
    switch (pick(8)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * (pick(9) - 4);
      case 3: return floordiv(a, c);
      case 4: return floormod(a, c);
      case 5: return ir::min(a, b);
      case 6: return ir::max(a, b);
      default: return ir::select(a < b, a, b);
    }
  };
  int checked = 0;
  for (int test = 0; test < 400; ++test) {
    PrimExpr e = gen(4);
    int64_t ei = 1 + pick(6), ej = 1 + pick(5);
    RelaxSpec spec;
    spec.extent[i.get()] = PrimExpr(static_cast<int>(ei));
    spec.extent[j.get()] = PrimExpr(static_cast<int>(ej));
    spec.keep.insert(k.get());  // k stays a point: the interval may mention it
    auto iv = eval_interval(e, spec);
    ASSERT_TRUE(iv.has_value()) << ir::to_string(e);
    for (int64_t kv : {-3, 0, 5}) {
      ir::Bindings at_k{{k, kv}};
      int64_t lo = ir::eval_int(iv->lo, at_k), hi = ir::eval_int(iv->hi, at_k);
      for (int64_t vi = 0; vi < ei; ++vi) {
        for (int64_t vj = 0; vj < ej; ++vj) {
          int64_t v = ir::eval_int(e, {{i, vi}, {j, vj}, {k, kv}});
          ASSERT_LE(lo, v) << ir::to_string(e) << " at i=" << vi << " j=" << vj << " k=" << kv;
          ASSERT_LE(v, hi) << ir::to_string(e) << " at i=" << vi << " j=" << vj << " k=" << kv;
          ++checked;
        }
      }
    }
  }
  std::printf("%d points checked\n", checked);
}

TEST(Interval, AgreesWithConstIntBoundWhereBothAreExact) {
  Var i("i"), j("j");
  Analyzer ana;
  auto si = ana.bind(i, 0, 8);  // i in [0, 7]
  auto sj = ana.bind(j, 0, 4);  // j in [0, 3]
  RelaxSpec spec;
  spec.extent[i.get()] = PrimExpr(8);
  spec.extent[j.get()] = PrimExpr(4);
  for (const PrimExpr& e : {i * 4 + j, i - j, floordiv(i * 4 + j, 4), floordiv(i, 3), floormod(j, 16),
                            floormod(i * 4 + j, 4), floormod(i + 8, 4), ir::min(i, 3), ir::max(j - 2, 0), i * -2 + 1,
                            floordiv(i - 9, 4), floormod(i - 9, 4)}) {
    auto iv = eval_interval(e, spec);
    ASSERT_TRUE(iv.has_value()) << ir::to_string(e);
    ConstIntBound b = ana.const_int_bound(e);
    EXPECT_EQ((std::pair{ir::eval_int(iv->lo), ir::eval_int(iv->hi)}), (std::pair{b.min, b.max}))
        << ir::to_string(e) << ": const_int_bound " << b.to_string();
  }
}

// A fused loop var that compute_at keeps (one value per iteration) maps back to its axes as
// floordiv/floormod of a point: both must stay points, or a producer attached there is computed
// over its whole tensor at every iteration (a depthwise conv's padded planes were).
TEST(Interval, DivAndModOfAKeptVarArePoints) {
  Var f("f"), j("j"), one("one");
  RelaxSpec spec;
  spec.keep.insert(f.get());
  spec.extent[j.get()] = PrimExpr(4);
  spec.extent[one.get()] = PrimExpr(1);  // a relaxed loop of one iteration
  for (const PrimExpr& e : {floormod(f + one, 32), floordiv(f + one, 32), floormod(f * 2 + 1 + one, 8),
                            floordiv(f + one, floordiv(PrimExpr(32), PrimExpr(32))) * 3}) {
    auto iv = eval_interval(e, spec);
    ASSERT_TRUE(iv.has_value()) << ir::to_string(e);
    EXPECT_TRUE(ir::structural_equal(iv->lo, iv->hi)) << ir::to_string(e) << ": [" << ir::to_string(iv->lo) << ", "
                                                      << ir::to_string(iv->hi) << "]";
    for (int64_t v : {0, 31, 77})
      EXPECT_EQ(ir::eval_int(iv->lo, {{f, v}}), ir::eval_int(e, {{f, v}, {one, 0}})) << ir::to_string(e) << " at f=" << v;
  }
  // Not a point: the whole range of the modulus.
  auto iv = eval_interval(floormod(f + j, 32), spec);
  ASSERT_TRUE(iv.has_value());
  EXPECT_EQ(ir::eval_int(iv->hi), 31);
}

TEST(Interval, FoldingBuildersFoldConstantsAndIdentities) {
  Var x("x");
  PrimExpr zero(0), one(1);
  EXPECT_EQ(ir::to_string(fold_add(fold_sub(x, PrimExpr(3)), PrimExpr(3))), "x");
  EXPECT_EQ(ir::eval_int(fold_floordiv(PrimExpr(-7), PrimExpr(2))), -4);
  EXPECT_EQ(ir::eval_int(fold_floormod(PrimExpr(-7), PrimExpr(2))), 1);
  EXPECT_EQ(ir::eval_int(fold_ceildiv(PrimExpr(7), PrimExpr(2))), 4);
  EXPECT_TRUE(fold_mul(x, one).same_as(x));
  EXPECT_EQ(ir::eval_int(fold_mul(x, zero)), 0);
  EXPECT_EQ(ir::to_string(fold_floordiv(x, one)), "x");
}

}  // namespace
}  // namespace anvil::arith
