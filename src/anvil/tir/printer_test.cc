// Golden text of statements and functions.
#include "anvil/tir/printer.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::floordiv;

PrimFunc matmul() {
  Var n = ir::size_var("n"), m = ir::size_var("m"), k = ir::size_var("k");
  Buffer A = decl_buffer({n, k}, DataType::float32(), "A");
  Buffer B = decl_buffer({k, m}, DataType::float32(), "B");
  Buffer C = decl_buffer({n, m}, DataType::float32(), "C");
  Var i("i"), j("j"), kk("kk");
  Stmt update = buffer_store(C, buffer_load(C, {i, j}) + buffer_load(A, {i, kk}) * buffer_load(B, {kk, j}), {i, j});
  Stmt body = make_for(i, 0, n, make_for(j, 0, m, seq({buffer_store(C, 0, {i, j}), make_for(kk, 0, k, update)})),
                       ForKind::kParallel);
  return make_prim_func("matmul", {A, B, C}, body);
}

TEST(StmtPrinter, MatmulGolden) {
  EXPECT_EQ(to_string(matmul()),
            "func matmul(A: Buffer(float32, [n, k]), B: Buffer(float32, [k, m]), C: Buffer(float32, [n, m])):\n"
            "  for i in range(0, n) parallel:\n"
            "    for j in range(0, m):\n"
            "      C[i, j] = 0.0f\n"
            "      for kk in range(0, k):\n"
            "        C[i, j] = C[i, j] + A[i, kk] * B[kk, j]\n");
}

TEST(StmtPrinter, AllStatementForms) {
  Buffer A = decl_buffer({64}, DataType::float32(), "A");
  Var tmp("T", ir::handle_type());
  Buffer T = Buffer::make(tmp, DataType::float32(), {4}, {}, {}, "T", 64, "local");
  Var i("i"), tx("tx"), x("x", DataType::float32());
  Stmt s = seq({
      allocate(tmp, DataType::float32(), {4}, "local",
               let_stmt(x, buffer_load(A, {i}),
                        seq({buffer_store(T, x, {0}),
                             if_then_else(i < 2, evaluate(0),
                                          if_then_else(i < 4, buffer_store(A, 1, {i}), buffer_store(A, 2, {i})))}))),
      make_thread_for(
          tx, 0, 32, "threadIdx.x",
          attr_stmt("pragma_unroll", PrimExpr(), 4, make_for(i, 4, 8, buffer_store(A, 0, {i}), ForKind::kUnrolled))),
  });
  EXPECT_EQ(to_string(s),
            "T = allocate(float32, [4], \"local\")\n"
            "x: float32 = A[i]\n"
            "T[0] = x\n"
            "if i < 2:\n"
            "  evaluate(0)\n"
            "elif i < 4:\n"
            "  A[i] = 1.0f\n"
            "else:\n"
            "  A[i] = 2.0f\n"
            "for tx in range(0, 32) thread(\"threadIdx.x\"):\n"
            "  with attr(\"pragma_unroll\", 4):\n"
            "    for i in range(4, 12) unrolled:\n"
            "      A[i] = 0.0f\n");
}

TEST(StmtPrinter, FuncWithScalarParamRetTypeAndAttrs) {
  Buffer A = decl_buffer({8}, DataType::int32(), "A");
  Var alpha("alpha");
  Var h("h", ir::handle_type());
  PrimFunc f = PrimFunc::make({h, alpha}, {{h, A}}, buffer_store(A, alpha, {0}), DataType::int32(), {{"tuned", 1}});
  EXPECT_EQ(to_string(f),
            "func main(h: A = Buffer(int32, [8]), alpha: int32) -> int32:\n"
            "  attr tuned = 1\n"
            "  A[0] = alpha\n");
}

TEST(StmtPrinter, FlattenedBodyOfParamBuffersPrintsTheParamNames) {
  // storage_flatten's form: the body reads 1-d views (same data var, same name) of the 2-d params.
  Buffer A = decl_buffer({4, 8}, DataType::float32(), "A");
  Buffer C = decl_buffer({4, 8}, DataType::float32(), "C");
  auto flat = [](const Buffer& b) {
    return Buffer::make(b->data(), b->dtype(), {32}, {}, {}, b->name(), b->alignment(), b->scope());
  };
  Var i("i");
  PrimFunc f = make_prim_func(
      "flat", {A, C}, make_for(i, 0, 32, buffer_store(flat(C), buffer_load(flat(A), {i}) * 2.0, {i})));
  EXPECT_EQ(to_string(f),
            "func flat(A: Buffer(float32, [4, 8]), C: Buffer(float32, [4, 8])):\n"
            "  for i in range(0, 32):\n"
            "    C[i] = A[i] * 2.0f\n");
}

TEST(StmtPrinter, SiblingLoopsKeepTheirNamesNestedOnesAreSuffixed) {
  Buffer A = decl_buffer({4, 4}, DataType::float32(), "A");
  Var i1("i"), j1("j"), i2("i"), j2("j"), i3("i");
  Stmt first = make_for(i1, 0, 4, make_for(j1, 0, 4, buffer_store(A, 1, {i1, j1})));
  Stmt second = make_for(i2, 0, 4, make_for(j2, 0, 4, buffer_store(A, 2, {i2, j2})));
  Stmt nested = make_for(i1, 0, 4, make_for(i3, 0, 4, buffer_store(A, 3, {i1, i3})));
  EXPECT_EQ(to_string(make_prim_func("loops", {A}, seq({first, second, nested}))),
            "func loops(A: Buffer(float32, [4, 4])):\n"
            "  for i in range(0, 4):\n"
            "    for j in range(0, 4):\n"
            "      A[i, j] = 1.0f\n"
            "  for i in range(0, 4):\n"
            "    for j in range(0, 4):\n"
            "      A[i, j] = 2.0f\n"
            "  for i in range(0, 4):\n"
            "    for i_1 in range(0, 4):\n"
            "      A[i, i_1] = 3.0f\n");
}

TEST(StmtPrinter, ShapeVarNamedLikeALoopVarIsSuffixedInsideTheLoopOnly) {
  Var n("n"), loop_n("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::int32(), "A");
  Stmt body = seq({make_for(loop_n, 0, 4, buffer_store(A, loop_n, {loop_n})),
                   make_for(i, 0, n, buffer_store(A, 0, {i}))});
  EXPECT_EQ(to_string(make_prim_func("shadow", {A}, body)),
            "func shadow(A: Buffer(int32, [n])):\n"
            "  for n_1 in range(0, 4):\n"
            "    A[n_1] = n_1\n"
            "  for i in range(0, n):\n"
            "    A[i] = 0\n");
}

TEST(StmtPrinter, LoopFromLoToHiPrintsItsEnd) {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  PrimExpr lo = floordiv(n, 8), hi = floordiv(n + 7, 8);
  EXPECT_EQ(to_string(make_for(i, lo, hi - lo, buffer_store(A, 0, {i}))),
            "for i in range(n // 8, (n + 7) // 8):\n"
            "  A[i] = 0.0f\n");
  EXPECT_EQ(to_string(make_for(i, lo, n, buffer_store(A, 0, {i}))),
            "for i in range(n // 8, n // 8 + n):\n"
            "  A[i] = 0.0f\n");
}

}  // namespace
}  // namespace anvil::tir
