// Expression visitor, copy-on-write mutator and substitution.
#include "anvil/ir/expr_functor.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::ir {
namespace {

TEST(ExprVisitor, VisitsEveryVarUseIncludingLoadIndices) {
  struct CountVars : ExprVisitor {
    int count = 0;
    void visit_(const VarNode*) override { ++count; }
  } v;
  Var i("i"), j("j");
  Buffer A = decl_buffer({4, 4}, DataType::float32(), "A");
  v.visit_expr(select(i < j, buffer_load(A, {i, j}), exp(cast(DataType::float32(), i))));
  EXPECT_EQ(v.count, 5);
}

TEST(ExprMutator, ReturnsSameNodeWhenNothingChanges) {
  Var i("i"), j("j");
  Buffer A = decl_buffer({4}, DataType::float32(), "A");
  PrimExpr e = select(i < j, buffer_load(A, {i + 1}), float_imm(0)) * 2.0;
  ExprMutator m;
  EXPECT_TRUE(m.mutate_expr(e).same_as(e));
}

TEST(ExprMutator, RebuildsOnlyTheChangedPath) {
  struct IToJ : ExprMutator {
    Var from, to;
    using ExprMutator::mutate_;
    PrimExpr mutate_(const VarNode* op) override { return op == from.get() ? PrimExpr(to) : ref_of(op); }
  } m;
  Var i("i"), j("j"), k("k");
  m.from = i;
  m.to = j;
  PrimExpr left = k * 3, e = left + i;
  PrimExpr out = m.mutate_expr(e);
  EXPECT_FALSE(out.same_as(e));
  EXPECT_TRUE(out.as<AddNode>()->a().same_as(left));  // untouched subtree shared
  EXPECT_EQ(to_string(out), "k * 3 + j");
}

TEST(Substitute, ReplacesVarsInExpressionsAndBufferShapes) {
  Var n = size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  PrimExpr e = buffer_load(A, {i}) + buffer_load(A, {n - 1});
  VarMap map{{n, PrimExpr(16)}, {i, PrimExpr(3)}};
  PrimExpr out = substitute(e, map);
  EXPECT_EQ(to_string(out), "A[3] + A[16 - 1]");
  auto* a = out.as<AddNode>()->a().as<BufferLoadNode>();
  auto* b = out.as<AddNode>()->b().as<BufferLoadNode>();
  EXPECT_EQ(as_const_int(a->buffer()->shape()[0]), 16);
  EXPECT_TRUE(a->buffer().same_as(b->buffer()));  // one new buffer per old buffer
  EXPECT_TRUE(substitute(e, VarMap{}).same_as(e));
}

TEST(Substitute, DtypeMismatchIsTypeError) {
  Var i("i");
  VarMap map{{i, Var("f", DataType::float32())}};
  EXPECT_THROW(substitute(i + 1, map), Error);
}

}  // namespace
}  // namespace anvil::ir
