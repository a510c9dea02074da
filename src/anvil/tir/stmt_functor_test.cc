// Statement visitor, mutator and substitution.
#include "anvil/tir/stmt_functor.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/printer.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using ir::decl_buffer;

Stmt sample(const Buffer& A, const Var& n, const Var& i) {
  Var x("x", DataType::float32());
  return make_for(
      i, 0, n,
      let_stmt(x, buffer_load(A, {i}), if_then_else(x > 0, buffer_store(A, x * 2, {i}), buffer_store(A, 0, {i}))));
}

TEST(StmtVisitor, SeesStatementsAndTheirExpressions) {
  Var n("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  struct Counter : StmtVisitor {
    int stores = 0, loads = 0;
    using StmtVisitor::visit_;
    void visit_(const BufferStoreNode* op) override {
      ++stores;
      StmtVisitor::visit_(op);
    }
    void visit_(const ir::BufferLoadNode* op) override {
      ++loads;
      StmtVisitor::visit_(op);
    }
  } c;
  c.visit_stmt(sample(A, n, i));
  EXPECT_EQ(c.stores, 2);
  EXPECT_EQ(c.loads, 1);
  int nodes = 0;
  post_order_visit(sample(A, n, i), [&](const ir::PrimExprNode*) { ++nodes; });
  EXPECT_GT(nodes, 10);
}

TEST(StmtMutator, IdentityKeepsEveryNode) {
  Var n("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Stmt s = seq({sample(A, n, i), attr_stmt("pragma_x", PrimExpr(), 1, evaluate(0))});
  StmtMutator m;
  EXPECT_TRUE(m.mutate_stmt(s).same_as(s));
  PrimFunc f = make_prim_func("f", {A, n}, s);
  EXPECT_TRUE(m.mutate_func(f).same_as(f));
}

TEST(StmtMutator, ChangedSequenceIsFlattened) {
  struct Expand : StmtMutator {
    using StmtMutator::mutate_;
    Stmt mutate_(const EvaluateNode*) override { return seq({evaluate(1), evaluate(2)}); }
  } m;
  Stmt s = seq({evaluate(0), evaluate(0)});
  Stmt out = m.mutate_stmt(s);
  ASSERT_NE(out.as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(out.as<SeqStmtNode>()->size(), 4u);
}

TEST(Substitute, SpecializesASymbolicLoop) {
  Var n("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Stmt out = substitute(sample(A, n, i), ir::VarMap{{n, PrimExpr(8)}});
  EXPECT_EQ(to_string(out),
            "for i in range(0, 8):\n"
            "  x: float32 = A[i]\n"
            "  if x > 0.0f:\n"
            "    A[i] = x * 2.0f\n"
            "  else:\n"
            "    A[i] = 0.0f\n");
}

}  // namespace
}  // namespace anvil::tir
