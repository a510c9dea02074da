// AssertStmt: the node and its checks, printer golden text, structural equality/hash, visitors,
// the reference interpreter, and both CPU code generators ("llvm": JIT; "c": exported .so) — a
// passing condition runs the body, a failing one raises a ValueError with the formatted message,
// the process survives and the module stays usable; also inside a parallel task body and under a
// workspace allocation (freed on the failure path).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <functional>

#include "anvil/base/error.h"
#include "anvil/codegen/c/codegen_c.h"
#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/test_util.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/stmt_functor.h"
#include "anvil/tir/structural_equal.h"
#include "anvil/tir/verify.h"

namespace anvil::tir {
namespace {

namespace fs = std::filesystem;
using anvil::testing::error_of;
using ir::buffer_load;
using ir::decl_buffer;

float* f32(Tensor& t) { return static_cast<float*>(t.data()); }

// A[i] += 1 for i < n, after assert(n <= 8, ...); the message has a quote, a percent sign and
// two values.
PrimFunc guarded_inc() {
  Var n("n"), i("i");
  Buffer A = decl_buffer({8}, DataType::float32(), "A");
  Stmt loop = make_for(i, 0, n, buffer_store(A, buffer_load(A, {i}) + 1.0f, {i}));
  Stmt body = assert_stmt(n <= 8, "guard: \"n\" is {} but A holds {} (100% full)", loop, {n, ir::int_imm(8)});
  return make_prim_func("guard", {A, n}, body);
}

// for i in parallel(0, 64): assert(i != bad, "row {} is bad"); A[i] = i.
PrimFunc parallel_rows() {
  Var bad("bad"), i("i");
  Buffer A = decl_buffer({64}, DataType::float32(), "A");
  Stmt store = buffer_store(A, ir::cast(DataType::float32(), i), {i});
  Stmt body = make_for(i, 0, 64, assert_stmt(ir::ne(i, bad), "rows: row {} is bad", store, {i}), ForKind::kParallel);
  return make_prim_func("rows", {A, bad}, body);
}

// A workspace allocation of m floats (size known at run time) around an assert and a parallel
// loop whose tasks assert too: both failure paths free the workspace before returning.
PrimFunc scratch(int64_t big) {
  Var m("m"), limit("limit"), i("i"), j("j");
  Buffer A = decl_buffer({64}, DataType::float32(), "A");
  Var t("T", ir::handle_type());
  Buffer T = Buffer::make(t, DataType::float32(), {m}, {}, {}, "T", 64, "global");
  Stmt fill = make_for(j, 0, 64,
                       assert_stmt(j < limit, "scratch: j = {} reached the limit {}",
                                   buffer_store(A, buffer_load(T, {0}) + ir::cast(DataType::float32(), j), {j}),
                                   {j, limit}),
                       ForKind::kParallel);
  Stmt body = allocate(t, DataType::float32(), {m}, "global",
                       seq({buffer_store(T, 2.0f, {0}),
                            assert_stmt(m < ir::int_imm(big), "scratch: m = {} is too big", fill, {m})}));
  return make_prim_func("scratch", {A, m, limit}, body);
}

TEST(AssertStmt, FactoryChecksItsOperands) {
  Var n("n");
  Stmt body = evaluate(0);
  EXPECT_THROW(AssertStmtNode::make(n, "x", body), Error);                    // not a bool
  EXPECT_THROW(AssertStmtNode::make(n < 3, "x", Stmt()), Error);              // no body
  EXPECT_THROW(AssertStmtNode::make(n < 3, "x {} {}", body, {n}), Error);     // two holes, one value
  EXPECT_THROW(AssertStmtNode::make(n < 3, "x", body, {n}), Error);           // no hole
  EXPECT_THROW(AssertStmtNode::make(n < 3, "x {}", body, {PrimExpr(1.5f)}), Error);  // float value
  Stmt a = AssertStmtNode::make(n < 3, "n = {}", body, {n});
  auto* op = a.as<AssertStmtNode>();
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->message(), "n = {}");
  EXPECT_EQ(op->message_args().size(), 1u);
  EXPECT_EQ(a->type_key(), "tir.AssertStmt");
  EXPECT_EQ(stmt_kind_name(StmtKind::kAssertStmt), "AssertStmt");
  EXPECT_EQ(assert_message_pieces("a {} b {}"), (std::vector<std::string>{"a ", " b ", ""}));
}

TEST(AssertStmt, PrinterGolden) {
  EXPECT_EQ(to_string(guarded_inc()),
            "func guard(A: Buffer(float32, [8]), n: int32):\n"
            "  assert(n <= 8, \"guard: \\\"n\\\" is {} but A holds {} (100% full)\", n, 8)\n"
            "  for i in range(0, n):\n"
            "    A[i] = A[i] + 1.0f\n");
  Var x("x");
  EXPECT_EQ(to_string(assert_stmt(x > 0, "positive", evaluate(0))), "assert(x > 0, \"positive\")\nevaluate(0)\n");
}

TEST(AssertStmt, StructuralEqualityAndHash) {
  auto make = [](const std::string& msg, int bound) {
    Var n("n");
    return assert_stmt(n < bound, msg, evaluate(n), {n});
  };
  Stmt a = make("n = {}", 3), b = make("n = {}", 3);
  EXPECT_TRUE(structural_equal(a, b, true));
  EXPECT_EQ(structural_hash(a, true), structural_hash(b, true));
  EXPECT_FALSE(structural_equal(a, make("n is {}", 3), true));  // message
  EXPECT_FALSE(structural_equal(a, make("n = {}", 4), true));   // condition
  EXPECT_NE(structural_hash(a, true), structural_hash(make("n is {}", 3), true));
  Var n("n");
  EXPECT_FALSE(structural_equal(assert_stmt(n < 3, "{}", evaluate(0), {n}),
                                assert_stmt(n < 3, "{}", evaluate(0), {n + 1}), true));  // message args
  EXPECT_TRUE(structural_equal(guarded_inc(), guarded_inc(), false));
}

TEST(AssertStmt, VisitorsMutatorsAndVerify) {
  Var n("n"), m("m");
  Stmt a = assert_stmt(n < 3, "{}", evaluate(n), {n});
  int uses = 0;
  post_order_visit(a, [&](const ir::PrimExprNode* e) { uses += e == n.get(); });
  EXPECT_EQ(uses, 3);  // condition, message argument, body
  Stmt b = substitute(a, ir::VarMap{{n, m}});
  EXPECT_TRUE(structural_equal(b, assert_stmt(m < 3, "{}", evaluate(m), {m})));
  class Identity : public StmtMutator {};
  EXPECT_TRUE(Identity().mutate_stmt(a).same_as(a));
  EXPECT_TRUE(well_formed_errors(guarded_inc()).empty());
  PrimFunc bad = make_prim_func("bad", {n}, assert_stmt(n < 3, "{}", evaluate(0), {m}));
  std::vector<std::string> errors = well_formed_errors(bad);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("'m'"), std::string::npos) << errors[0];
}

TEST(AssertStmt, InterpreterRunsTheBodyOrRaisesTheMessage) {
  PrimFunc f = guarded_inc();
  Tensor a = Tensor::empty({8}, DataType::float32());
  std::memset(a.data(), 0, 32);
  run_prim_func(f, {a.dl(), int64_t{8}});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f32(a)[i], 1.0f) << i;
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { run_prim_func(f, {a.dl(), int64_t{9}}); }, &kind),
            "guard: \"n\" is 9 but A holds 8 (100% full)");
  EXPECT_EQ(kind, ErrorKind::kValue);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f32(a)[i], 1.0f) << i;  // the body did not run
  Tensor r = Tensor::empty({64}, DataType::float32());
  EXPECT_EQ(error_of([&] { run_prim_func(parallel_rows(), {r.dl(), int64_t{40}}); }), "rows: row 40 is bad");
}

// ---- code generators ------------------------------------------------------------------------

class AssertCodegen : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("anvil_assert_" + std::to_string(::getpid()) + "_" + GetParam());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  Module build(const std::vector<PrimFunc>& fs) {
    if (GetParam() == "llvm") return codegen::build_llvm(fs, Target::parse("llvm"));
    Module c = codegen::build_c(fs, Target::parse("c"));
    std::string path = (dir_ / ("k" + std::to_string(counter_++) + ".so")).string();
    pipeline::export_library(c, path);
    return Module::load_from_file(path);
  }

  fs::path dir_;
  int counter_ = 0;
};

TEST_P(AssertCodegen, PassingRunsFailingRaisesTheMessage) {
  Module m = build({guarded_inc()});
  Tensor a = Tensor::empty({8}, DataType::float32());
  std::memset(a.data(), 0, 32);
  m["guard"](a, int64_t{5});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f32(a)[i], i < 5 ? 1.0f : 0.0f) << i;
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m["guard"](a, int64_t{9}); }, &kind),
            "kernel 'guard' failed: guard: \"n\" is 9 but A holds 8 (100% full)");
  EXPECT_EQ(kind, ErrorKind::kValue);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f32(a)[i], i < 5 ? 1.0f : 0.0f) << i;  // the body did not run
  m["guard"](a, int64_t{8});  // the module is still usable
  for (int i = 0; i < 8; ++i) EXPECT_EQ(f32(a)[i], i < 5 ? 2.0f : 1.0f) << i;
}

TEST_P(AssertCodegen, FailsInsideAParallelTaskBody) {
  Module m = build({parallel_rows()});
  Tensor a = Tensor::empty({64}, DataType::float32());
  for (int round = 0; round < 3; ++round) {
    ErrorKind kind{};
    std::string msg = error_of([&] { m["rows"](a, int64_t{37}); }, &kind);
    EXPECT_NE(msg.find("rows: row 37 is bad"), std::string::npos) << msg;
    EXPECT_EQ(kind, ErrorKind::kValue) << msg;
    m["rows"](a, int64_t{-1});
    for (int i = 0; i < 64; ++i) ASSERT_EQ(f32(a)[i], float(i)) << i;
  }
}

TEST_P(AssertCodegen, WorkspaceAllocationsAroundAFailingAssert) {
  Module m = build({scratch(1 << 20)});
  Tensor a = Tensor::empty({64}, DataType::float32());
  for (int round = 0; round < 3; ++round) {
    m["scratch"](a, int64_t{100000}, int64_t{64});
    for (int j = 0; j < 64; ++j) ASSERT_EQ(f32(a)[j], 2.0f + float(j)) << j;
    EXPECT_EQ(error_of([&] { m["scratch"](a, int64_t{1 << 20}, int64_t{64}); }),
              "kernel 'scratch' failed: scratch: m = 1048576 is too big");
    std::string msg = error_of([&] { m["scratch"](a, int64_t{100000}, int64_t{0}); });
    EXPECT_NE(msg.find("scratch: j = "), std::string::npos) << msg;
    EXPECT_NE(msg.find("reached the limit 0"), std::string::npos) << msg;
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, AssertCodegen, ::testing::Values("llvm", "c"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace anvil::tir
