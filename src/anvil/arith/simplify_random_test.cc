// Randomized check of the simplifier: random integer (and float) expression trees over a few
// vars with random ranges are simplified, then both versions are evaluated with the reference
// evaluator (ir/eval.h) on random values inside the ranges and must agree. The seed is fixed and
// printed; ANVIL_SIMPLIFY_SEED overrides it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <random>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::arith {
namespace {

uint64_t seed() {
  const char* s = std::getenv("ANVIL_SIMPLIFY_SEED");
  return s ? std::strtoull(s, nullptr, 10) : 20261130;
}

struct Gen {
  std::mt19937_64 rng;
  std::vector<Var> vars;
  int64_t rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  PrimExpr leaf(DataType t) {
    if (rand(0, 2) == 0) return ir::int_imm(rand(-9, 9), t);
    return vars[static_cast<size_t>(rand(0, static_cast<int64_t>(vars.size()) - 1))];
  }
  PrimExpr cond(int depth, DataType t) {
    PrimExpr a = expr(depth - 1, t), b = expr(depth - 1, t);
    switch (rand(0, 5)) {
      case 0: return a < b;
      case 1: return a <= b;
      case 2: return ir::eq(a, b);
      case 3: return ir::ne(a, b);
      case 4: return (a > b) && (b >= leaf(t));
      default: return !(a < b) || (b > leaf(t));
    }
  }
  PrimExpr expr(int depth, DataType t) {
    if (depth <= 0) return leaf(t);
    PrimExpr a = expr(depth - 1, t);
    switch (rand(0, 11)) {
      case 0: return a + expr(depth - 1, t);
      case 1: return a - expr(depth - 1, t);
      case 2: return a * ir::int_imm(rand(-4, 4), t);
      case 3: return a * expr(depth - 2, t);
      case 4: return ir::floordiv(a, ir::int_imm(rand(1, 9) * (rand(0, 4) == 0 ? -1 : 1), t));
      case 5: return ir::floormod(a, ir::int_imm(rand(1, 9) * (rand(0, 4) == 0 ? -1 : 1), t));
      case 6: return a / ir::int_imm(rand(1, 9), t);
      case 7: return ir::min(a, expr(depth - 1, t));
      case 8: return ir::max(a, expr(depth - 1, t));
      case 9: return ir::select(cond(depth - 1, t), a, expr(depth - 1, t));
      case 10: return ir::floordiv(a * ir::int_imm(rand(1, 8), t) + expr(depth - 1, t), ir::int_imm(rand(1, 8), t));
      default: return ir::floormod(a + ir::int_imm(rand(-20, 20), t), ir::int_imm(rand(2, 8), t)) + a;
    }
  }
};

TEST(SimplifyRandom, IntegerExpressionsKeepTheirValue) {
  uint64_t s = seed();
  std::printf("SimplifyRandom seed=%llu\n", static_cast<unsigned long long>(s));
  Gen g{std::mt19937_64(s), {}};
  int checked = 0, changed = 0;
  for (int test = 0; test < 3000; ++test) {
    DataType t = test % 3 == 0 ? DataType::int32() : DataType::int64();
    g.vars = {Var("x", t), Var("y", t), Var("z", t)};
    Analyzer ana;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    std::vector<BindScope> scopes;
    for (const Var& v : g.vars) {
      int64_t lo = g.rand(-20, 10), ext = g.rand(1, 30);
      ranges.emplace_back(lo, lo + ext - 1);
      if (g.rand(0, 3) != 0) scopes.push_back(ana.bind(v, ir::int_imm(lo, t), ir::int_imm(ext, t)));
      else ranges.back() = {-30, 30};  // unbound var: any value
    }
    PrimExpr e = g.expr(static_cast<int>(g.rand(1, 5)), t);
    PrimExpr se;
    try {
      se = simplify(e, ana);
    } catch (const Error& err) {
      FAIL() << "case " << test << ": simplify threw " << err.what() << " on " << ir::to_string(e);
    }
    if (!se.same_as(e)) ++changed;
    for (int sample = 0; sample < 8; ++sample) {
      ir::Bindings b;
      for (size_t k = 0; k < g.vars.size(); ++k) b[g.vars[k]] = g.rand(ranges[k].first, ranges[k].second);
      int64_t want = 0, got = 0;
      bool want_ok = true;
      try {
        want = ir::eval_int(e, b);
      } catch (const Error&) {
        want_ok = false;  // a division by zero at this point: nothing to compare
      }
      if (!want_ok) continue;
      ASSERT_NO_THROW(got = ir::eval_int(se, b)) << ir::to_string(e) << "  ->  " << ir::to_string(se);
      ASSERT_EQ(want, got) << "case " << test << " seed " << s << "\n  " << ir::to_string(e) << "\n  -> "
                           << ir::to_string(se) << "\n  x=" << std::get<int64_t>(b[g.vars[0]])
                           << " y=" << std::get<int64_t>(b[g.vars[1]]) << " z=" << std::get<int64_t>(b[g.vars[2]]);
      ++checked;
    }
  }
  std::printf("SimplifyRandom: %d evaluations, %d of 3000 expressions rewritten\n", checked, changed);
  EXPECT_GT(changed, 1000);
}

TEST(SimplifyRandom, FloatConstantFoldingMatchesTheEvaluator) {
  uint64_t s = seed() + 1;
  std::printf("SimplifyRandom float seed=%llu\n", static_cast<unsigned long long>(s));
  std::mt19937_64 rng(s);
  auto val = [&] { return std::uniform_real_distribution<double>(-100, 100)(rng); };
  auto pick = [&](int n) { return static_cast<int>(std::uniform_int_distribution<int>(0, n - 1)(rng)); };
  std::function<PrimExpr(int, DataType)> gen = [&](int depth, DataType t) -> PrimExpr {
    if (depth == 0) return ir::float_imm(val(), t);
    PrimExpr a = gen(depth - 1, t), b = gen(depth - 1, t);
    switch (pick(9)) {
      case 0: return a + b;
      case 1: return a - b;
      case 2: return a * b;
      case 3: return a / b;
      case 4: return ir::min(a, b);
      case 5: return ir::max(a, b);
      case 6: return ir::select(a < b, a, b);
      case 7: return ir::floordiv(a, b);
      default: return ir::sqrt(ir::abs(a)) + ir::exp(ir::float_imm(0.01, t) * b);
    }
  };
  int unfolded = 0;
  for (int test = 0; test < 2000; ++test) {
    DataType t = test % 2 ? DataType::float32() : DataType::float64();
    PrimExpr e = gen(pick(4) + 1, t);
    PrimExpr se = simplify(e);
    if (!se.as<ir::FloatImmNode>()) {
      // Only a division by a constant zero stays unfolded.
      ASSERT_NE(ir::to_string(se).find("0.0"), std::string::npos) << ir::to_string(e) << " -> " << ir::to_string(se);
      ++unfolded;
      continue;
    }
    double want = ir::eval_float(e), got = ir::eval_float(se);
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got));
    } else {
      ASSERT_EQ(want, got) << "case " << test << ": " << ir::to_string(e) << " -> " << ir::to_string(se);
    }
  }
  std::printf("SimplifyRandom float: 2000 expressions, %d left unfolded (division by zero)\n", unfolded);
}

}  // namespace
}  // namespace anvil::arith

namespace anvil::arith {
namespace {

// Vectors: ramps and broadcasts of random scalar index expressions, combined lane-wise; every
// lane of the simplified expression must match.
TEST(SimplifyRandom, VectorExpressionsKeepEveryLane) {
  uint64_t s = seed() + 2;
  std::printf("SimplifyRandom vector seed=%llu\n", static_cast<unsigned long long>(s));
  Gen g{std::mt19937_64(s), {}};
  const int lanes = 4;
  DataType t = DataType::int32();
  g.vars = {Var("x", t), Var("y", t), Var("z", t)};
  std::function<PrimExpr(int)> vec = [&](int depth) -> PrimExpr {
    if (depth <= 0) {
      if (g.rand(0, 1)) return ir::ramp(g.expr(2, t), ir::int_imm(g.rand(-3, 3), t), lanes);
      return ir::broadcast(g.expr(2, t), lanes);
    }
    PrimExpr a = vec(depth - 1);
    auto c = [&](int64_t lo, int64_t hi) { return ir::broadcast(ir::int_imm(g.rand(lo, hi), t), lanes); };
    switch (g.rand(0, 7)) {
      case 0: return a + vec(depth - 1);
      case 1: return a - vec(depth - 1);
      case 2: return a * c(-3, 3);
      case 3: return ir::floordiv(a, c(1, 8));
      case 4: return ir::floormod(a, c(1, 8));
      case 5: return ir::min(a, vec(depth - 1));
      case 6: return ir::max(a, vec(depth - 1));
      default: return ir::select(a < vec(depth - 1), a, vec(depth - 1));
    }
  };
  int checked = 0;
  for (int test = 0; test < 1000; ++test) {
    Analyzer ana;
    std::vector<BindScope> scopes;
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (const Var& v : g.vars) {
      int64_t lo = g.rand(-10, 10), ext = g.rand(1, 20);
      ranges.emplace_back(lo, lo + ext - 1);
      scopes.push_back(ana.bind(v, ir::int_imm(lo, t), ir::int_imm(ext, t)));
    }
    PrimExpr e = vec(static_cast<int>(g.rand(1, 3)));
    PrimExpr se = simplify(e, ana);
    ASSERT_EQ(se.dtype(), e.dtype()) << ir::to_string(e) << " -> " << ir::to_string(se);
    for (int sample = 0; sample < 4; ++sample) {
      ir::Evaluator ev;
      for (size_t k = 0; k < g.vars.size(); ++k)
        ev.bind(g.vars[k], ir::EvalValue::of_int(g.rand(ranges[k].first, ranges[k].second), t));
      ir::EvalValue want, got;
      try {
        want = ev.eval(e);
      } catch (const Error&) {
        continue;
      }
      ASSERT_NO_THROW(got = ev.eval(se)) << ir::to_string(e) << " -> " << ir::to_string(se);
      for (int l = 0; l < lanes; ++l)
        ASSERT_EQ(want.as_int(want.lanes.size() == 1 ? 0 : l), got.as_int(got.lanes.size() == 1 ? 0 : l))
            << "case " << test << " lane " << l << "\n  " << ir::to_string(e) << "\n  -> " << ir::to_string(se);
      ++checked;
    }
  }
  std::printf("SimplifyRandom vector: %d evaluations of 1000 expressions\n", checked);
}

}  // namespace
}  // namespace anvil::arith
