// Expression nodes, factories and the promoting builders.
#include "anvil/ir/expr.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/ir/buffer.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"

namespace anvil::ir {
namespace {

ErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorKind::kInternal;
}

TEST(Expr, IntLiteralIsInt32Immediate) {
  PrimExpr e = 7;
  ASSERT_NE(e.as<IntImmNode>(), nullptr);
  EXPECT_EQ(e.as<IntImmNode>()->value(), 7);
  EXPECT_EQ(e.dtype(), DataType::int32());
  EXPECT_EQ(e.as<FloatImmNode>(), nullptr);
}

TEST(Expr, DoubleLiteralIsFloat32ImmediateAndAdoptsFloatTypes) {
  PrimExpr e = 2.5;
  ASSERT_NE(e.as<FloatImmNode>(), nullptr);
  EXPECT_EQ(e.dtype(), DataType::float32());
  Var x("x", DataType::float64());
  EXPECT_EQ(select(x > 0, x, 0.0).dtype(), DataType::float64());
}

TEST(Expr, ImmediateOutOfRangeIsValueError) {
  EXPECT_EQ(kind_of([] { int_imm(300, DataType::int8()); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([] { int_imm(-1, DataType::uint32()); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([] { int_imm(2, bool_type()); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([] { float_imm(1.0, DataType::int32()); }), ErrorKind::kType);
}

TEST(Expr, VarsAreDistinctByIdentity) {
  Var a("i"), b("i");
  EXPECT_FALSE(a.same_as(b));
  EXPECT_TRUE(a.same_as(a));
  EXPECT_EQ(a.name(), "i");
  EXPECT_FALSE(a->is_size_var());
  EXPECT_TRUE(size_var("n")->is_size_var());
  EXPECT_EQ(kind_of([] { Var(""); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([] { size_var("x", DataType::float32()); }), ErrorKind::kType);
}

TEST(Expr, StrictFactoryRejectsMixedDtypes) {
  Var i("i"), j("j", DataType::int64());
  EXPECT_EQ(kind_of([&] { AddNode::make(i, j); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { AndNode::make(i, i); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { AddNode::make(i, PrimExpr()); }), ErrorKind::kValue);
  PrimExpr s = AddNode::make(i, i);
  EXPECT_EQ(s.kind(), ExprKind::kAdd);
  EXPECT_TRUE(s.as<AddNode>()->a().same_as(i));
}

TEST(Expr, OperatorsBuildNodesWithoutFolding) {
  Var i("i"), n("n");
  PrimExpr e = i * 2 + n;
  const AddNode* add = e.as<AddNode>();
  ASSERT_NE(add, nullptr);
  const MulNode* mul = add->a().as<MulNode>();
  ASSERT_NE(mul, nullptr);
  EXPECT_EQ(as_const_int(mul->b()), 2);
  PrimExpr c = PrimExpr(2) + 3;  // two immediates: still an Add node
  EXPECT_EQ(c.kind(), ExprKind::kAdd);
}

TEST(Expr, IntLiteralAdoptsOtherOperandDtype) {
  Var n("n", DataType::int64());
  PrimExpr e = n + 1;
  EXPECT_EQ(e.dtype(), DataType::int64());
  EXPECT_EQ(e.as<AddNode>()->b().dtype(), DataType::int64());
  Var x("x", DataType::float16());
  EXPECT_EQ((x * 2).dtype(), DataType::float16());
  EXPECT_EQ((x * 0.5).dtype(), DataType::float16());
  Var b("b", DataType::int8());
  EXPECT_EQ(kind_of([&] { (void)(b + 1000); }), ErrorKind::kValue);
}

TEST(Expr, FloatLiteralWithIntegerIsTypeError) {
  Var i("i");
  EXPECT_EQ(kind_of([&] { (void)(i * 0.5); }), ErrorKind::kType);
}

TEST(Expr, MixedWidthsWidenAndIntMeetsFloatCasts) {
  Var a("a", DataType::int32()), b("b", DataType::int64());
  PrimExpr e = a + b;
  EXPECT_EQ(e.dtype(), DataType::int64());
  EXPECT_EQ(e.as<AddNode>()->a().kind(), ExprKind::kCast);
  Var f("f", DataType::float32());
  PrimExpr g = a * f;
  EXPECT_EQ(g.dtype(), DataType::float32());
  EXPECT_EQ(g.as<MulNode>()->a().kind(), ExprKind::kCast);
  Var u("u", DataType::uint32());
  EXPECT_EQ(kind_of([&] { (void)(a + u); }), ErrorKind::kType);
  Var p("p", bool_type());
  EXPECT_EQ(kind_of([&] { (void)(p + a); }), ErrorKind::kType);
}

TEST(Expr, ComparisonsGiveBoolAndLogicalNeedsBool) {
  Var i("i"), n("n");
  PrimExpr c = i < n;
  EXPECT_EQ(c.dtype(), bool_type());
  EXPECT_EQ(eq(i, 0).kind(), ExprKind::kEQ);
  PrimExpr both = c && (i >= 0);
  EXPECT_EQ(both.kind(), ExprKind::kAnd);
  EXPECT_EQ((!c).kind(), ExprKind::kNot);
  EXPECT_EQ(kind_of([&] { (void)(i && n); }), ErrorKind::kType);
}

TEST(Expr, VectorsRampBroadcastAndScalarPromotion) {
  Var i("i");
  PrimExpr r = ramp(i, 1, 4);
  EXPECT_EQ(r.dtype(), DataType(DataType::kInt, 32, 4));
  PrimExpr s = r + 1;  // scalar literal broadcast to 4 lanes
  EXPECT_EQ(s.dtype().lanes(), 4);
  EXPECT_EQ(s.as<AddNode>()->b().kind(), ExprKind::kBroadcast);
  EXPECT_EQ(kind_of([&] { RampNode::make(i, 1, 1); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { (void)(r + ramp(i, 1, 8)); }), ErrorKind::kType);
  EXPECT_EQ((r < 8).dtype(), bool_type(4));
  EXPECT_EQ(broadcast(i, 1).get(), i.get());
}

TEST(Expr, SelectCastLetAndCalls) {
  Var x("x", DataType::float32()), i("i");
  PrimExpr s = select(i < 3, x, 0);
  EXPECT_EQ(s.dtype(), DataType::float32());
  EXPECT_EQ(kind_of([&] { SelectNode::make(i, x, x); }), ErrorKind::kType);
  EXPECT_TRUE(cast(DataType::float32(), x).same_as(x));
  EXPECT_EQ(cast(DataType::int32(), x).kind(), ExprKind::kCast);
  PrimExpr v = cast(DataType(DataType::kFloat, 32, 4), i);
  EXPECT_EQ(v.kind(), ExprKind::kBroadcast);
  Var t("t", DataType::float32());
  EXPECT_EQ(let(t, x * 2, t + t).dtype(), DataType::float32());
  EXPECT_EQ(kind_of([&] { LetNode::make(t, i, t); }), ErrorKind::kType);
  EXPECT_EQ(exp(x).as<CallNode>()->op(), CallOp::k_exp);
  EXPECT_EQ(fma(x, 2, 1).as<CallNode>()->args().size(), 3u);
  EXPECT_EQ(abs(i).dtype(), DataType::int32());
  EXPECT_EQ(kind_of([&] { (void)exp(i); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { CallNode::make(CallOp::k_pow, {x}); }), ErrorKind::kValue);
  EXPECT_EQ(parse_call_op("sigmoid"), CallOp::k_sigmoid);
  EXPECT_EQ(call_op_name(CallOp::k_rsqrt), "rsqrt");
  EXPECT_FALSE(parse_call_op("nope").has_value());
}

TEST(Expr, NegationOfImmediateIsImmediate) {
  EXPECT_EQ(as_const_int(-PrimExpr(3)), -3);
  Var i("i");
  EXPECT_EQ((-i).kind(), ExprKind::kSub);
}

TEST(Buffer, LoadChecksArityAndSupportsVectorIndices) {
  Var n = size_var("n");
  Buffer A = decl_buffer({n, 16}, DataType::float32(), "A");
  EXPECT_EQ(A->name(), "A");
  EXPECT_EQ(A->scope(), "global");
  EXPECT_TRUE(is_handle(A->data().dtype()));
  EXPECT_EQ(as_const_int(A->elem_offset()), 0);
  Var i("i"), j("j");
  PrimExpr ld = buffer_load(A, {i, j});
  EXPECT_EQ(ld.dtype(), DataType::float32());
  PrimExpr vl = buffer_load(A, {i, ramp(j, 1, 8)});
  EXPECT_EQ(vl.dtype(), DataType(DataType::kFloat, 32, 8));
  EXPECT_EQ(kind_of([&] { buffer_load(A, {i}); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { buffer_load(A, {i, Var("f", DataType::float32())}); }), ErrorKind::kType);
  EXPECT_EQ(A.num_elements().kind(), ExprKind::kMul);
}

TEST(Buffer, FlatIndexUsesStridesAndOffset) {
  Var n = size_var("n"), m = size_var("m"), i("i"), j("j"), k("k");
  Buffer A = decl_buffer({n, m, 4}, DataType::float32(), "A");
  EXPECT_EQ(to_string(A.flat_index({i, j, k})), "i * (m * 4) + j * 4 + k");
  Var s0("s0");
  Buffer S = Buffer::make(Var("d", handle_type()), DataType::int8(), {n, m}, {s0, 1}, 7, "S", 1, "global");
  EXPECT_EQ(to_string(S.flat_index({i, j})), "7 + i * s0 + j");
  EXPECT_EQ(S.flat_index({i, ramp(j, 1, 4)}).dtype().lanes(), 4);
  Buffer scalar = decl_buffer({}, DataType::float32(), "x");
  EXPECT_EQ(to_string(scalar.flat_index({})), "0");
}

TEST(Buffer, FactoryValidatesOperands) {
  Var data("d", handle_type());
  EXPECT_EQ(kind_of([&] { Buffer::make(Var("x"), DataType::float32(), {4}, {}, {}, "B", 64, "global"); }),
            ErrorKind::kType);
  EXPECT_EQ(kind_of([&] {
              Buffer::make(data, DataType::float32(), {4}, {1, 1}, {}, "B", 64, "global");
            }),
            ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { Buffer::make(data, DataType::float32(), {4}, {}, {}, "B", 3, "global"); }),
            ErrorKind::kValue);
  Buffer b = Buffer::make(data, DataType::float32(), {4, 4}, {8, 1}, 2, "B", 16, "shared");
  EXPECT_EQ(b->strides().size(), 2u);
}

}  // namespace
}  // namespace anvil::ir
