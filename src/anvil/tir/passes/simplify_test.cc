// simplify pass: golden text and interpreter checks.
#include "anvil/tir/passes/simplify.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::floordiv;
using ir::floormod;
using testing::verified;

PrimFunc example() {
  Var n = ir::size_var("n");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Buffer B = decl_buffer({n}, DataType::float32(), "B");
  Var i("i"), j("j"), k("k"), x("x");
  Stmt body = make_for(
      i, 0, n,
      make_for(j, 0, 1,
               seq({if_then_else(i < n, buffer_store(B, buffer_load(A, {(i * 4 + j + 1) - i * 4 + i - 1}), {i})),
                    if_then_else(i >= n, buffer_store(B, 0, {i}), evaluate(0)),
                    make_for(k, 0, 0, buffer_store(B, 1, {k})),
                    let_stmt(x, 2, if_then_else(ir::eq(floormod(i * 2 + x, 2), 0),
                                                buffer_store(B, buffer_load(B, {floordiv(i * 8 + 7, 8)}) + 1.0, {i})))})));
  return make_prim_func("example", {A, B}, body);
}

TEST(SimplifyPass, FoldsIndicesDropsDecidedIfsAndTrivialLoops) {
  PrimFunc f = example();
  PrimFunc g = verified(simplify(verified(f)));
  EXPECT_EQ(to_string(g),
            "func example(A: Buffer(float32, [n]), B: Buffer(float32, [n])):\n"
            "  for i in range(0, n):\n"
            "    B[i] = A[i]\n"
            "    B[i] = B[i] + 1.0f\n");
  for (int64_t n : {0, 1, 7})
    testing::expect_same_results(f, g, {{n}, {n}}, 11);
}

// A split of a plain-var extent (te.var("n"), not a size var), partitioned: the clamp max(n // 8, 0)
// of the split point folds because n is a parameter buffer's dimension, so >= 0.
TEST(SimplifyPass, ShapeVarsOfParamBuffersAreNonNegative) {
  Var n("n"), io("io");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  PrimExpr split = ir::min(ir::max(floordiv(n, 8), 0), floordiv(n + 7, 8));
  PrimFunc f = make_prim_func("clamped", {A}, make_for(io, 0, split, buffer_store(A, 1, {io * 8})));
  PrimFunc g = verified(simplify(verified(f)));
  EXPECT_EQ(to_string(g),
            "func clamped(A: Buffer(float32, [n])):\n"
            "  for io in range(0, n // 8):\n"
            "    A[io * 8] = 1.0f\n");
  for (int64_t size : {0, 7, 8, 21}) testing::expect_same_results(f, g, {{size}}, 5);
  // A scalar parameter is whatever the caller passes: nothing is assumed about it.
  Buffer B = decl_buffer({n}, DataType::float32(), "B");
  PrimFunc h = make_prim_func("scalar_n", {B, n}, make_for(io, 0, split, buffer_store(B, 1, {io * 8})));
  EXPECT_NE(to_string(simplify(h)).find("max(n // 8, 0)"), std::string::npos) << to_string(simplify(h));
}

TEST(SimplifyPass, UsesIfConditionsInBranches) {
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Var i("i");
  Stmt body = make_for(i, 0, 16, if_then_else(i < 8, if_then_else(i < 10, buffer_store(A, 1, {i})),
                                              if_then_else(i >= 8, buffer_store(A, 2, {i}))));
  PrimFunc f = make_prim_func("branches", {A}, body);
  PrimFunc g = verified(simplify(verified(f)));
  EXPECT_EQ(to_string(g),
            "func branches(A: Buffer(float32, [16])):\n"
            "  for i in range(0, 16):\n"
            "    if i < 8:\n"
            "      A[i] = 1.0f\n"
            "    else:\n"
            "      A[i] = 2.0f\n");
  testing::expect_same_results(f, g, {{16}}, 12);
}

TEST(SimplifyPass, UnchangedFunctionIsReturnedAsIs) {
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Var i("i");
  PrimFunc f = make_prim_func("same", {A}, make_for(i, 0, 16, buffer_store(A, 1, {i})));
  EXPECT_TRUE(verified(simplify(verified(f))).same_as(f));
}

}  // namespace
}  // namespace anvil::tir::passes
