// unroll pass: golden text and interpreter checks.
#include "anvil/tir/passes/unroll.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using testing::verified;

// `extent_var`: a scalar param the inner extent may use (defined, so the input is well formed).
PrimFunc blocked(ForKind inner_kind, PrimExpr inner_extent = 4, std::optional<Var> extent_var = std::nullopt) {
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Buffer B = decl_buffer({16}, DataType::float32(), "B");
  Var i("i"), k("k");
  Stmt body = make_for(i, 0, 4,
                       make_for(k, 0, inner_extent, buffer_store(B, buffer_load(A, {i * 4 + k}) + 1.0, {i * 4 + k}),
                                inner_kind));
  std::vector<FuncParam> params = {A, B};
  if (extent_var) params.emplace_back(*extent_var);
  return make_prim_func("blocked", params, body);
}

TEST(Unroll, UnrolledLoopBecomesOneCopyPerIteration) {
  PrimFunc f = blocked(ForKind::kUnrolled);
  PrimFunc g = verified(unroll(verified(f)));
  EXPECT_EQ(to_string(g),
            "func blocked(A: Buffer(float32, [16]), B: Buffer(float32, [16])):\n"
            "  for i in range(0, 4):\n"
            "    B[i * 4] = A[i * 4] + 1.0f\n"
            "    B[i * 4 + 1] = A[i * 4 + 1] + 1.0f\n"
            "    B[i * 4 + 2] = A[i * 4 + 2] + 1.0f\n"
            "    B[i * 4 + 3] = A[i * 4 + 3] + 1.0f\n");
  testing::expect_same_results(f, g, {{16}, {16}}, 31);
}

TEST(Unroll, SymbolicExtentFallsBackToSerial) {
  Var m("m");
  PrimFunc f = blocked(ForKind::kUnrolled, ir::min(m, 4), m);
  EXPECT_EQ(to_string(verified(unroll(verified(f)))),
            "func blocked(A: Buffer(float32, [16]), B: Buffer(float32, [16]), m: int32):\n"
            "  for i in range(0, 4):\n"
            "    for k in range(0, min(m, 4)):\n"
            "      B[i * 4 + k] = A[i * 4 + k] + 1.0f\n");
}

TEST(Unroll, MaxStepUnrollsSmallSerialLoops) {
  PrimFunc f = blocked(ForKind::kSerial);
  EXPECT_TRUE(verified(unroll(verified(f))).same_as(f));
  PrimFunc g = verified(unroll(f, UnrollOptions{4}));  // the inner loop (4 steps), not the outer (16)
  EXPECT_EQ(to_string(g),
            "func blocked(A: Buffer(float32, [16]), B: Buffer(float32, [16])):\n"
            "  for i in range(0, 4):\n"
            "    B[i * 4] = A[i * 4] + 1.0f\n"
            "    B[i * 4 + 1] = A[i * 4 + 1] + 1.0f\n"
            "    B[i * 4 + 2] = A[i * 4 + 2] + 1.0f\n"
            "    B[i * 4 + 3] = A[i * 4 + 3] + 1.0f\n");
  testing::expect_same_results(f, g, {{16}, {16}}, 32);
  PrimFunc h = verified(unroll(f, UnrollOptions{16}));  // everything
  testing::expect_same_results(f, h, {{16}, {16}}, 33);
  EXPECT_EQ(to_string(h).find("for"), std::string::npos);
}

}  // namespace
}  // namespace anvil::tir::passes
