// select_to_if pass: golden text, and interpreter checks of the pass alone and followed by
// loop_partition + simplify (the build's order), which must peel the padding of a copy.
#include "anvil/tir/passes/select_to_if.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/loop_partition.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/passes/simplify.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using testing::verified;

// P[y, x] = A[y - 1, x - 1] inside, 0 in a one-element border: a zero-padding copy of n x n.
PrimFunc pad_copy(int n, ForKind inner_kind = ForKind::kSerial) {
  Buffer A = decl_buffer({n, n}, DataType::float32(), "A");
  Buffer P = decl_buffer({n + 2, n + 2}, DataType::float32(), "P");
  Var y("y"), x("x");
  auto clamp = [&](const PrimExpr& v) { return ir::min(ir::max(v, 0), PrimExpr(n - 1)); };
  PrimExpr inside = y >= 1 && y < n + 1 && x >= 1 && x < n + 1;
  PrimExpr value = ir::select(inside, buffer_load(A, {clamp(y - 1), clamp(x - 1)}), PrimExpr(0.0f));
  Stmt body = make_for(y, 0, n + 2, make_for(x, 0, n + 2, buffer_store(P, value, {y, x}), inner_kind));
  return make_prim_func("pad_copy", {A, P}, body);
}

TEST(SelectToIf, PaddingCopyBecomesNestedIfs) {
  PrimFunc f = pad_copy(3);
  PrimFunc g = verified(select_to_if(verified(f)));
  EXPECT_EQ(to_string(g),
            "func pad_copy(A: Buffer(float32, [3, 3]), P: Buffer(float32, [5, 5])):\n"
            "  for y in range(0, 5):\n"
            "    for x in range(0, 5):\n"
            "      if y >= 1:\n"
            "        if y < 4:\n"
            "          if x >= 1:\n"
            "            if x < 4:\n"
            "              P[y, x] = A[min(max(y - 1, 0), 2), min(max(x - 1, 0), 2)]\n"
            "            else:\n"
            "              P[y, x] = 0.0f\n"
            "          else:\n"
            "            P[y, x] = 0.0f\n"
            "        else:\n"
            "          P[y, x] = 0.0f\n"
            "      else:\n"
            "        P[y, x] = 0.0f\n");
  testing::expect_same_results(f, g, {{3, 3}, {5, 5}}, 7);
}

TEST(SelectToIf, WithLoopPartitionTheInteriorIsAPlainCopy) {
  for (int n : {5, 16, 2, 1}) {
    PrimFunc f = pad_copy(n);
    PrimFunc g = verified(simplify(loop_partition(simplify(select_to_if(verified(f))))));
    std::string text = to_string(g);
    // Some loop stores an unclamped, unguarded copy: P[y, x] = A[y - 1, x - 1] (for n = 1 the
    // single row's loop is gone and its copy is a single element).
    if (n > 1) EXPECT_NE(text.find("P[y, x] = A[y - 1, x - 1]"), std::string::npos) << text;
    testing::expect_same_results(f, g, {{n, n}, {n + 2, n + 2}}, 11 + static_cast<uint32_t>(n));
  }
}

TEST(SelectToIf, LeavesVectorizedLoopsDataConditionsAndUnrelatedSelects) {
  // Inside a vectorized loop: unchanged.
  PrimFunc v = pad_copy(4, ForKind::kVectorized);
  EXPECT_TRUE(select_to_if(v).same_as(v));
  // A condition on loaded data (relu) or not bounding the innermost loop var: unchanged.
  Buffer A = decl_buffer({8}, DataType::float32(), "A");
  Buffer B = decl_buffer({8}, DataType::float32(), "B");
  Var i("i"), s = ir::size_var("s");
  PrimExpr a = buffer_load(A, {i});
  PrimFunc relu = make_prim_func("relu", {A, B}, make_for(i, 0, 8, buffer_store(B, ir::select(a > 0.0f, a, PrimExpr(0.0f)), {i})));
  EXPECT_TRUE(select_to_if(relu).same_as(relu));
  PrimFunc outer = make_prim_func(
      "outer", {A, B}, make_for(s, 0, 3, make_for(i, 0, 8, buffer_store(B, ir::select(s > 1, a, PrimExpr(1.0f)), {i}))));
  EXPECT_TRUE(select_to_if(outer).same_as(outer));
}

}  // namespace
}  // namespace anvil::tir::passes
