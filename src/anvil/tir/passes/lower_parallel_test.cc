// lower_parallel: nested parallel loops become serial, parallel loops are rebased to start at
// 0, and the result interprets to the same values.
#include "anvil/tir/passes/lower_parallel.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/printer.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using passes::lower_parallel;
using ir::decl_buffer;
using passes::testing::verified;

TEST(LowerParallel, NestedParallelLoopBecomesSerial) {
  Var i("i"), j("j");
  Buffer A = decl_buffer({4, 4}, DataType::float32(), "A");
  Stmt s = make_for(i, 0, 4, make_for(j, 0, 4, buffer_store(A, 1.0, {i, j}), ForKind::kParallel), ForKind::kParallel);
  EXPECT_EQ(to_string(verified(lower_parallel(verified(s, {A})), {A})),
            "for i in range(0, 4) parallel:\n"
            "  for j in range(0, 4):\n"
            "    A[i, j] = 1.0f\n");
}

TEST(LowerParallel, NonZeroMinIsRebased) {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  PrimFunc f = make_prim_func("f", {A}, make_for(i, 2, n - 2, buffer_store(A, ir::cast(DataType::float32(), i), {i}), ForKind::kParallel));
  PrimFunc g = verified(lower_parallel(verified(f)));
  EXPECT_EQ(to_string(g->body()),
            "for i in range(0, n - 2) parallel:\n"
            "  A[i + 2] = float32(i + 2)\n");
  Tensor a = Tensor::empty({6}, DataType::float32()), b = Tensor::empty({6}, DataType::float32());
  for (int k = 0; k < 6; ++k) static_cast<float*>(a.data())[k] = static_cast<float*>(b.data())[k] = -1;
  run_prim_func(f, {a.dl()});
  run_prim_func(g, {b.dl()});
  for (int k = 0; k < 6; ++k) EXPECT_EQ(static_cast<float*>(a.data())[k], static_cast<float*>(b.data())[k]) << k;
}

TEST(LowerParallel, SerialCodeIsUnchanged) {
  Var i("i");
  Buffer A = decl_buffer({4}, DataType::float32(), "A");
  Stmt s = make_for(i, 0, 4, buffer_store(A, 1.0, {i}));
  EXPECT_TRUE(verified(lower_parallel(verified(s, {A})), {A}).same_as(s));
}

}  // namespace
}  // namespace anvil::tir
