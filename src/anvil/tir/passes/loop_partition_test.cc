// loop_partition pass: golden text and interpreter checks over several sizes.
#include "anvil/tir/passes/loop_partition.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/passes/simplify.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::floordiv;
using testing::verified;

// B[i] = A[i] * 2 over n elements, split by `factor` without dividing n.
PrimFunc split_tail(int factor) {
  Var n = ir::size_var("n");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Buffer B = decl_buffer({n}, DataType::float32(), "B");
  Var io("io"), ii("ii");
  PrimExpr idx = io * factor + ii;
  Stmt body = make_for(io, 0, floordiv(n + (factor - 1), factor),
                       make_for(ii, 0, factor,
                                if_then_else(idx < n, buffer_store(B, buffer_load(A, {idx}) * 2.0, {idx}))));
  return make_prim_func("split_tail", {A, B}, body);
}

TEST(LoopPartition, PeelsTheTailOfANonDividingSplit) {
  PrimFunc f = split_tail(4);
  PrimFunc g = verified(loop_partition(verified(f)));
  EXPECT_EQ(to_string(g),
            "func split_tail(A: Buffer(float32, [n]), B: Buffer(float32, [n])):\n"
            "  for io in range(0, n // 4):\n"
            "    for ii in range(0, 4):\n"
            "      B[io * 4 + ii] = A[io * 4 + ii] * 2.0f\n"
            "  for io in range(n // 4, (n + 3) // 4):\n"
            "    for ii in range(0, 4):\n"
            "      if io * 4 + ii < n:\n"
            "        B[io * 4 + ii] = A[io * 4 + ii] * 2.0f\n");
  for (int64_t n : {0, 1, 3, 4, 5, 8, 13})
    testing::expect_same_results(f, g, {{n}, {n}}, 41 + static_cast<uint32_t>(n));
}

TEST(LoopPartition, LowerBoundConditionKeepsThePrefix) {
  Buffer A = decl_buffer({32}, DataType::float32(), "A");
  Var i("i"), s = ir::size_var("s");
  Stmt body = make_for(i, 0, 32, if_then_else(i >= s, buffer_store(A, 5, {i})));
  PrimFunc f = make_prim_func("from_s", {A}, body);
  f = make_prim_func("from_s", {A}, make_for(s, 0, 40, body));
  PrimFunc g = verified(loop_partition(verified(f)));
  EXPECT_EQ(to_string(g),
            "func from_s(A: Buffer(float32, [32])):\n"
            "  for s in range(0, 1):\n"
            "    for i in range(0, 32):\n"
            "      A[i] = 5.0f\n"
            "  for s in range(1, 40):\n"
            "    for i in range(0, 32):\n"
            "      if i >= s:\n"
            "        A[i] = 5.0f\n");
  testing::expect_same_results(f, g, {{32}}, 50);
}

TEST(LoopPartition, NonLinearOrDataDependentConditionIsLeftAlone) {
  Buffer A = decl_buffer({32}, DataType::float32(), "A");
  Buffer I = decl_buffer({1}, DataType::int32(), "I");
  Var i("i");
  PrimFunc f = make_prim_func("mod", {A}, make_for(i, 0, 32, if_then_else(ir::eq(ir::floormod(i, 2), 0),
                                                                          buffer_store(A, 5, {i}))));
  EXPECT_TRUE(verified(loop_partition(verified(f))).same_as(f));
  // The bound is loaded from memory the loop writes: not invariant.
  PrimFunc g = make_prim_func("load", {A, I}, make_for(i, 0, 32, if_then_else(i < buffer_load(I, {0}),
                                                                             buffer_store(I, i, {0}))));
  EXPECT_TRUE(verified(loop_partition(verified(g))).same_as(g));
}

}  // namespace
}  // namespace anvil::tir::passes
