// Structural equality and hash of expressions.
#include "anvil/ir/structural_equal.h"

#include <gtest/gtest.h>

#include <random>

#include "anvil/ir/expr_functor.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/ir/structural_hash.h"

namespace anvil::ir {
namespace {

TEST(StructuralEqual, SameShapeAndValuesAreEqual) {
  Var i("i");
  PrimExpr a = i * 4 + 1, b = i * 4 + 1;
  EXPECT_FALSE(a.same_as(b));
  EXPECT_TRUE(structural_equal(a, b));
  EXPECT_EQ(structural_hash(a), structural_hash(b));
  EXPECT_FALSE(structural_equal(a, i * 4 + 2));
  EXPECT_FALSE(structural_equal(a, i * 4 - 1));
  EXPECT_FALSE(structural_equal(int_imm(1), int_imm(1, DataType::int64())));
  EXPECT_NE(structural_hash(int_imm(1)), structural_hash(int_imm(1, DataType::int64())));
}

TEST(StructuralEqual, FreeVarsByIdentityUnlessMapped) {
  Var i("i"), j("i");
  EXPECT_FALSE(structural_equal(i + 1, j + 1));
  EXPECT_TRUE(structural_equal(i + 1, j + 1, /*map_free_vars=*/true));
  EXPECT_EQ(structural_hash(i + 1, true), structural_hash(j + 1, true));
  EXPECT_NE(structural_hash(i + 1), structural_hash(j + 1));
  Var k("k");
  // Mapping is one-to-one and consistent.
  EXPECT_FALSE(structural_equal(i + j, k + k, true));
  EXPECT_FALSE(structural_equal(i + i, j + k, true));
  EXPECT_TRUE(structural_equal(i + j * i, k + i * k, true));
  EXPECT_FALSE(structural_equal(i, Var("f", DataType::int64()), true));
}

TEST(StructuralEqual, LetDefinesItsVar) {
  Var x("x"), y("y"), n("n");
  EXPECT_TRUE(structural_equal(let(x, n + 1, x * x), let(y, n + 1, y * y)));
  EXPECT_EQ(structural_hash(let(x, n + 1, x * x)), structural_hash(let(y, n + 1, y * y)));
  EXPECT_FALSE(structural_equal(let(x, n + 1, x * x), let(y, n + 1, y * n)));
}

TEST(StructuralEqual, BuffersCompareByStructureAndStayPaired) {
  Var i("i");
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Buffer B = decl_buffer({16}, DataType::float32(), "B");
  Buffer C = decl_buffer({16}, DataType::float32(), "C");
  Buffer D = decl_buffer({8}, DataType::float32(), "D");
  // Data vars are free: by identity unless mapped.
  EXPECT_FALSE(structural_equal(buffer_load(A, {i}), buffer_load(B, {i})));
  EXPECT_TRUE(structural_equal(buffer_load(A, {i}), buffer_load(B, {i}), true));
  EXPECT_FALSE(structural_equal(buffer_load(A, {i}), buffer_load(D, {i}), true));
  EXPECT_TRUE(
      structural_equal(buffer_load(A, {i}) + buffer_load(C, {i}), buffer_load(B, {i}) + buffer_load(C, {i}), true));
  EXPECT_FALSE(
      structural_equal(buffer_load(A, {i}) + buffer_load(A, {i}), buffer_load(B, {i}) + buffer_load(C, {i}), true));
}

TEST(StructuralEqual, FloatsCompareByBits) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(structural_equal(float_imm(nan), float_imm(nan)));
  EXPECT_FALSE(structural_equal(float_imm(0.0), float_imm(-0.0)));
}

// Random integer expressions over a few vars.
PrimExpr random_expr(std::mt19937& rng, const std::vector<Var>& vars, int depth) {
  std::uniform_int_distribution<int> pick(0, 9);
  int k = depth <= 0 ? pick(rng) % 2 : pick(rng);
  switch (k) {
    case 0:
      return vars[rng() % vars.size()];
    case 1:
      return int_imm(static_cast<int64_t>(rng() % 7) - 3);
    case 2:
      return random_expr(rng, vars, depth - 1) + random_expr(rng, vars, depth - 1);
    case 3:
      return random_expr(rng, vars, depth - 1) * random_expr(rng, vars, depth - 1);
    case 4:
      return random_expr(rng, vars, depth - 1) - random_expr(rng, vars, depth - 1);
    case 5:
      return floordiv(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
    case 6:
      return min(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
    case 7:
      return select(random_expr(rng, vars, depth - 1) < random_expr(rng, vars, depth - 1),
                    random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
    case 8: {
      Var t("t");
      return let(t, random_expr(rng, vars, depth - 1), t + random_expr(rng, vars, depth - 1));
    }
    default:
      return floormod(random_expr(rng, vars, depth - 1), random_expr(rng, vars, depth - 1));
  }
}

TEST(StructuralEqual, RandomRenamedCopiesAreEqualAndHashEqual) {
  const uint32_t seed = 20261130;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  std::vector<Var> vars = {Var("a"), Var("b"), Var("c")};
  std::vector<Var> fresh = {Var("x"), Var("y"), Var("z")};
  VarMap rename;
  for (size_t i = 0; i < vars.size(); ++i) rename[vars[i]] = fresh[i];
  int unequal_pairs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    PrimExpr e = random_expr(rng, vars, 4);
    PrimExpr copy = substitute(e, rename);
    ASSERT_TRUE(structural_equal(e, copy, true)) << to_string(e) << " vs " << to_string(copy);
    ASSERT_EQ(structural_hash(e, true), structural_hash(copy, true)) << to_string(e);
    PrimExpr other = random_expr(rng, vars, 4);
    bool eq = structural_equal(e, other);
    if (eq) {
      ASSERT_EQ(structural_hash(e), structural_hash(other)) << to_string(e) << " vs " << to_string(other);
    } else {
      ++unequal_pairs;
      if (to_string(e) != to_string(other)) {
        EXPECT_NE(structural_hash(e), structural_hash(other)) << to_string(e) << " vs " << to_string(other);
      }
    }
  }
  EXPECT_GT(unequal_pairs, 200);
}

}  // namespace
}  // namespace anvil::ir
