// remove_no_op pass: golden text and interpreter checks.
#include "anvil/tir/passes/remove_no_op.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using testing::verified;

TEST(RemoveNoOp, DropsEvaluatesEmptyLoopsAndUnreadAllocations) {
  Buffer A = decl_buffer({8}, DataType::float32(), "A");
  Var tmp("T", ir::handle_type()), used("U", ir::handle_type());
  Buffer T = ir::Buffer::make(tmp, DataType::float32(), {8}, {}, {}, "T", 64, "local");
  Buffer U = ir::Buffer::make(used, DataType::float32(), {8}, {}, {}, "U", 64, "local");
  // i is the outer loop's var (read by the if below); the inner loops have vars of their own (a
  // loop var defined again inside its own loop is not well formed).
  Var i("i"), j("j"), k("k");
  Stmt body = seq({
      evaluate(0),
      make_for(k, 0, 8, seq({evaluate(1), evaluate(k)})),
      allocate(tmp, DataType::float32(), {8}, "local",
               make_for(k, 0, 8, seq({buffer_store(T, buffer_load(A, {k}), {k}), buffer_store(A, 3, {k})}))),
      allocate(used, DataType::float32(), {8}, "local",
               seq({make_for(k, 0, 8, buffer_store(U, buffer_load(A, {k}) * 2.0, {k})),
                    make_for(j, 0, 8, buffer_store(A, buffer_load(U, {j}), {j}))})),
      if_then_else(i < 3, evaluate(0), buffer_store(A, 1, {0})),
      make_for(j, 0, 0, buffer_store(A, 2, {j})),
  });
  PrimFunc f = make_prim_func("noops", {A}, make_for(i, 0, 1, body));
  PrimFunc g = verified(remove_no_op(verified(f)));
  EXPECT_EQ(to_string(g),
            "func noops(A: Buffer(float32, [8])):\n"
            "  for i in range(0, 1):\n"
            "    for k in range(0, 8):\n"
            "      A[k] = 3.0f\n"
            "    U = allocate(float32, [8], \"local\")\n"
            "    for k in range(0, 8):\n"
            "      U[k] = A[k] * 2.0f\n"
            "    for j in range(0, 8):\n"
            "      A[j] = U[j]\n"
            "    if not i < 3:\n"
            "      A[0] = 1.0f\n");
  testing::expect_same_results(f, g, {{8}}, 21);
}

TEST(RemoveNoOp, NothingLeftGivesEvaluateZero) {
  Buffer A = decl_buffer({8}, DataType::float32(), "A");
  Var i("i");
  PrimFunc f = make_prim_func("empty", {A}, make_for(i, 0, 8, evaluate(0)));
  EXPECT_EQ(to_string(verified(remove_no_op(verified(f)))),
            "func empty(A: Buffer(float32, [8])):\n"
            "  evaluate(0)\n");
}

}  // namespace
}  // namespace anvil::tir::passes
