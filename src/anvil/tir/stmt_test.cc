// Statement nodes and PrimFunc.
#include "anvil/tir/stmt.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/prim_func.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using ir::decl_buffer;

ErrorKind kind_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no error thrown";
  return ErrorKind::kInternal;
}

TEST(Stmt, ForAdoptsLiteralBoundsAndChecksThreadTags) {
  Var i("i", DataType::int64());
  Stmt body = evaluate(0);
  Stmt loop = make_for(i, 0, 10, body, ForKind::kParallel);
  const ForNode* f = loop.as<ForNode>();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->min().dtype(), DataType::int64());
  EXPECT_EQ(f->for_kind(), ForKind::kParallel);
  EXPECT_EQ(for_kind_name(f->for_kind()), "parallel");
  EXPECT_EQ(kind_of([&] { ForNode::make(i, 0, 10, ForKind::kSerial, body); }), ErrorKind::kType);
  Var tx("tx");
  EXPECT_EQ(make_thread_for(tx, 0, 32, "threadIdx.x", body).as<ForNode>()->thread_tag(), "threadIdx.x");
  EXPECT_EQ(kind_of([&] { make_thread_for(tx, 0, 32, "threadIdx.w", body); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { ForNode::make(tx, 0, 4, ForKind::kSerial, body, "threadIdx.x"); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { make_for(Var("f", DataType::float32()), 0, 4, body); }), ErrorKind::kType);
}

TEST(Stmt, BufferStoreChecksValueDtypeAndLanes) {
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Var i("i");
  EXPECT_EQ(buffer_store(A, 0, {i}).as<BufferStoreNode>()->value().dtype(), DataType::float32());
  EXPECT_EQ(kind_of([&] { buffer_store(A, i, {i}); }), ErrorKind::kType);
  PrimExpr vec = buffer_load(A, {ir::ramp(0, 1, 4)});
  Stmt st = buffer_store(A, vec, {ir::ramp(4, 1, 4)});
  EXPECT_EQ(st.kind(), StmtKind::kBufferStore);
  EXPECT_EQ(kind_of([&] { buffer_store(A, vec, {i}); }), ErrorKind::kType);
}

TEST(Stmt, SeqFlattensAndUnwraps) {
  Stmt a = evaluate(1), b = evaluate(2), c = evaluate(3);
  Stmt s = seq({a, seq({b, c})});
  ASSERT_NE(s.as<SeqStmtNode>(), nullptr);
  EXPECT_EQ(s.as<SeqStmtNode>()->size(), 3u);
  EXPECT_TRUE(seq({a}).same_as(a));
  EXPECT_EQ(seq({}).kind(), StmtKind::kEvaluate);
  EXPECT_EQ(kind_of([] { SeqStmtNode::make({}); }), ErrorKind::kValue);
}

TEST(Stmt, AllocateLetIfAndAttrValidate) {
  Var buf("T", ir::handle_type());
  Stmt body = evaluate(0);
  EXPECT_EQ(allocate(buf, DataType::float32(), {64}, "local", body).kind(), StmtKind::kAllocate);
  EXPECT_EQ(kind_of([&] { allocate(buf, DataType::float32(), {64}, "texture", body); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { allocate(Var("x"), DataType::float32(), {64}, "local", body); }), ErrorKind::kType);
  Var x("x", DataType::float32());
  EXPECT_EQ(let_stmt(x, 1, body).as<LetStmtNode>()->value().dtype(), DataType::float32());
  EXPECT_EQ(kind_of([&] { if_then_else(Var("c"), body); }), ErrorKind::kType);
  Var i("i");
  EXPECT_FALSE(if_then_else(i < 3, body).as<IfThenElseNode>()->else_case().defined());
  Stmt at = attr_stmt(std::string(attr::kStorageAlignment), buf, 64, body);
  EXPECT_EQ(at.as<AttrStmtNode>()->key(), "storage_alignment");
}

TEST(Stmt, AllocationSizeIsConstantOnlyForNonNegativeLiteralExtentsThatFitInt64) {
  Var buf("T", ir::handle_type());
  Stmt body = evaluate(0);
  auto alloc = [&](DataType t, std::vector<PrimExpr> extents) {
    return allocate(buf, t, std::move(extents), "global", body);
  };
  Stmt s = alloc(DataType::float32(), {4, 8});
  EXPECT_EQ(constant_allocation_elements(*s.as<AllocateNode>()), 32);
  EXPECT_EQ(stack_allocation_elements(*s.as<AllocateNode>()), 32);
  Stmt zero = alloc(DataType::float32(), {0, 8});  // empty, yet a stack array of one element
  EXPECT_EQ(constant_allocation_elements(*zero.as<AllocateNode>()), 0);
  EXPECT_EQ(stack_allocation_elements(*zero.as<AllocateNode>()), 1);
  Stmt sym = alloc(DataType::float32(), {4, Var("n")});
  EXPECT_EQ(constant_allocation_elements(*sym.as<AllocateNode>()), std::nullopt);
  EXPECT_EQ(stack_allocation_elements(*sym.as<AllocateNode>()), std::nullopt);
  Stmt neg = alloc(DataType::float32(), {-1, 8});  // left to the run-time check
  EXPECT_EQ(constant_allocation_elements(*neg.as<AllocateNode>()), std::nullopt);
  PrimExpr big = ir::int_imm(int64_t{1} << 40, DataType::int64());
  Stmt huge = alloc(DataType::int8(), {big, big});  // 2^80 elements
  EXPECT_EQ(constant_allocation_elements(*huge.as<AllocateNode>()), std::nullopt);
  // Exactly kMaxStackAllocBytes stays on the stack; one element more goes to the workspace.
  Stmt at_limit = alloc(DataType::float32(), {static_cast<int>(kMaxStackAllocBytes / 4)});
  EXPECT_EQ(stack_allocation_elements(*at_limit.as<AllocateNode>()), kMaxStackAllocBytes / 4);
  Stmt over = alloc(DataType::float32(), {static_cast<int>(kMaxStackAllocBytes / 4 + 1)});
  EXPECT_EQ(constant_allocation_elements(*over.as<AllocateNode>()), kMaxStackAllocBytes / 4 + 1);
  EXPECT_EQ(stack_allocation_elements(*over.as<AllocateNode>()), std::nullopt);
  Stmt wide = alloc(DataType::float64(), {static_cast<int>(kMaxStackAllocBytes / 4)});
  EXPECT_EQ(stack_allocation_elements(*wide.as<AllocateNode>()), std::nullopt);
}

TEST(PrimFunc, MakePrimFuncBindsBufferParams) {
  Var n = ir::size_var("n");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Buffer B = decl_buffer({n}, DataType::float32(), "B");
  Var i("i");
  Stmt body = make_for(i, 0, n, buffer_store(B, buffer_load(A, {i}) * 2.0, {i}));
  Var alpha("alpha", DataType::float32());
  PrimFunc f = make_prim_func("scale", {A, B, alpha}, body);
  ASSERT_EQ(f->params().size(), 3u);
  EXPECT_TRUE(f->buffer_of(f->params()[0]).same_as(A));
  EXPECT_FALSE(f->buffer_of(f->params()[2]).defined());
  EXPECT_EQ(f->str_attr(attr::kGlobalSymbol), "scale");
  EXPECT_TRUE(ir::is_void(f->ret_type()));
  PrimFunc g = f.with_attr("tuned", 1);
  EXPECT_EQ(g->attrs().size(), 2u);
  EXPECT_EQ(f->attrs().size(), 1u);
}

TEST(PrimFunc, RejectsBadBufferMap) {
  Buffer A = decl_buffer({4}, DataType::float32(), "A");
  Var h("h", ir::handle_type()), k("k");
  Stmt body = evaluate(0);
  EXPECT_EQ(kind_of([&] { PrimFunc::make({h}, {{k, A}}, body); }), ErrorKind::kValue);
  EXPECT_EQ(kind_of([&] { PrimFunc::make({k}, {{k, A}}, body); }), ErrorKind::kType);
  EXPECT_EQ(kind_of([&] { PrimFunc::make({h, h}, {}, body); }), ErrorKind::kValue);
}

}  // namespace
}  // namespace anvil::tir
