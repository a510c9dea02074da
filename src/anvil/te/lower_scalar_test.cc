// Scalar parameters of lowered kernels: Vars listed among the tensors (TVM's
// tvm.lower(s, [A, alpha, B])) become by-value params; a listed shape var is a param the tensors'
// shapes are checked against by an AssertStmt at the top of the body (the error names the var,
// its value, the tensor and the dimension); a variable neither listed nor bound by an
// argument's shape is an error at lower time that names it. Run in the reference interpreter and
// through pipeline::build for the "llvm" target (JIT).
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/te/lower.h"
#include "anvil/te/te_test_util.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/verify.h"

namespace anvil::te {
namespace {

using namespace anvil::te::testing;

struct Scale {
  Var n = ir::size_var("n");
  Var alpha = Var("alpha", DataType::float32());
  Tensor A = placeholder({n}, DataType::float32(), "A");
  Tensor B = compute({n}, [&](Var i) { return A(i) * PrimExpr(alpha); }, "B");
  Schedule s = create_schedule({B});
};

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(TeLowerScalar, FloatParamScalesInTheInterpreter) {
  Scale k;
  tir::PrimFunc f = lower(k.s, {k.A, k.alpha, k.B}, "scale");
  ASSERT_EQ(f->params().size(), 3u);
  EXPECT_EQ(f->params()[1].get(), k.alpha.get());
  EXPECT_FALSE(f->buffer_of(f->params()[1]).defined());
  HostTensor a({9}), b({9});
  fill_random(a, kSeed);
  run(f, {a.ptr(), 2.5, b.ptr()});
  std::vector<double> want(9);
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(a[i]) * 2.5;
  expect_close(b, want);
}

TEST(TeLowerScalar, BracedListsAndTensorVectorsStillWork) {
  Scale k;
  std::vector<Tensor> tensors = {k.A, k.B};
  std::vector<LowerArg> mixed = {k.A, k.alpha, k.B};
  EXPECT_EQ(lower(k.s, mixed, "mixed")->params().size(), 3u);
  // alpha is free in the tensors-only form.
  std::string msg = message_of([&] { lower(k.s, tensors, "only_tensors"); });
  EXPECT_NE(msg.find("'alpha'"), std::string::npos) << msg;
}

TEST(TeLowerScalar, UnlistedFreeVarIsAnErrorNamingIt) {
  Scale k;
  std::string msg = message_of([&] { lower(k.s, {k.A, k.B}, "scale"); });
  EXPECT_NE(msg.find("'alpha'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("neither an argument nor a shape variable"), std::string::npos) << msg;
  EXPECT_THROW(lower(k.s, {k.A, k.B}), Error);
  // The pipeline entry point reports it too (not an internal error of a later pass).
  try {
    pipeline::lower(k.s, {k.A, k.B}, "scale");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
  }
}

TEST(TeLowerScalar, VarGivenTwiceOrHandleVarIsAnError) {
  Scale k;
  EXPECT_THROW(lower(k.s, {k.A, k.alpha, k.alpha, k.B}), Error);
  Var h("h", ir::handle_type());
  EXPECT_THROW(lower(k.s, {k.A, k.alpha, h, k.B}), Error);
}

TEST(TeLowerScalar, IntParamInAnIndexExpression) {
  // B[i] = A[i + off], off an int32 param.
  Var off("off", DataType::int32());
  Tensor A = placeholder({12}, DataType::float32(), "A");
  Tensor B = compute({8}, [&](Var i) { return A(i + off); }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B, off}, "shift");
  HostTensor a({12}), b({8});
  fill_random(a, kSeed + 3);
  for (int64_t shift : {0, 3, 4}) {
    run(f, {a.ptr(), b.ptr(), shift});
    std::vector<double> want(8);
    for (size_t i = 0; i < want.size(); ++i) want[i] = a[i + static_cast<size_t>(shift)];
    expect_close(b, want);
  }
}

TEST(TeLowerScalar, ListedShapeVarIsCheckedAgainstTheTensors) {
  Scale k;
  tir::PrimFunc f = lower(k.s, {k.A, k.n, k.alpha, k.B}, "scale_n");
  ASSERT_EQ(f->params().size(), 4u);
  EXPECT_EQ(f->params()[1].get(), k.n.get());
  HostTensor a({6}), b({6});
  fill_random(a, kSeed + 1);
  run(f, {a.ptr(), int64_t{6}, 0.5, b.ptr()});
  std::vector<double> want(6);
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(a[i]) * 0.5;
  expect_close(b, want);
  std::string msg = message_of([&] { run(f, {a.ptr(), int64_t{5}, 0.5, b.ptr()}); });
  EXPECT_EQ(msg, "scale_n: argument 'n' is 5 but A.shape[0] is 6 (A has shape [n])");
}

TEST(TeLowerScalar, ListedShapeVarGetsOneAssertPerTensorDimension) {
  // The param buffers' dims that are n become fresh size vars A_shape_0, B_shape_0; the body
  // starts with one assert per such dim, before any computation.
  Scale k;
  tir::PrimFunc f = lower(k.s, {k.A, k.n, k.alpha, k.B}, "scale_n");
  auto* first = f->body().as<tir::AssertStmtNode>();
  ASSERT_NE(first, nullptr) << tir::to_string(f);
  EXPECT_EQ(first->message(), "scale_n: argument 'n' is {} but A.shape[0] is {} (A has shape [n])");
  auto* second = first->body().as<tir::AssertStmtNode>();
  ASSERT_NE(second, nullptr) << tir::to_string(f);
  EXPECT_EQ(second->message(), "scale_n: argument 'n' is {} but B.shape[0] is {} (B has shape [n])");
  EXPECT_EQ(f->buffer_of(f->params()[0])->shape()[0].as<ir::VarNode>()->name(), "A_shape_0");
  EXPECT_EQ(f->buffer_of(f->params()[3])->shape()[0].as<ir::VarNode>()->name(), "B_shape_0");
  EXPECT_TRUE(tir::well_formed_errors(f).empty()) << tir::to_string(f);
  // A tensor argument of the right length but the other of a different one: named too.
  HostTensor a({6}), b({5});
  fill_random(a, kSeed + 1);
  EXPECT_EQ(message_of([&] { run(f, {a.ptr(), int64_t{6}, 0.5, b.ptr()}); }),
            "scale_n: argument 'n' is 6 but B.shape[0] is 5 (B has shape [n])");
  // Not listed: no asserts, n bound from the shapes as before.
  tir::PrimFunc g = lower(k.s, {k.A, k.alpha, k.B}, "scale");
  EXPECT_EQ(g->body().as<tir::AssertStmtNode>(), nullptr);
}

// ---- compiled ("llvm") ------------------------------------------------------------------------

anvil::Tensor random_f32(int64_t n, uint32_t seed) {
  std::vector<int64_t> shape = {n};
  anvil::Tensor t = anvil::Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data())[i] = dist(rng);
  return t;
}

TEST(TeLowerScalar, CompiledKernelTakesScalarsAndChecksTheShapeVar) {
  register_runtime_functions();
  Scale k;
  Module m = pipeline::build(k.s, {k.A, k.n, k.alpha, k.B}, Target::parse("llvm"), "scale_n");
  const int64_t n = 10;
  anvil::Tensor a = random_f32(n, kSeed + 2), b = random_f32(n, kSeed + 5);
  m["scale_n"](a, n, 2.5, b);
  const float* pa = static_cast<const float*>(a.data());
  const float* pb = static_cast<const float*>(b.data());
  for (int64_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(pb[i], pa[i] * 2.5f) << i;
  // The wrong n: a clear error, and the module stays usable.
  try {
    m["scale_n"](a, int64_t{7}, 2.5, b);
    ADD_FAILURE() << "no error for n = 7 with tensors of 10";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    EXPECT_EQ(std::string(e.what()),
              "kernel 'scale_n' failed: scale_n: argument 'n' is 7 but A.shape[0] is 10 (A has shape [n])");
  }
  m["scale_n"](a, n, -1.0, b);
  for (int64_t i = 0; i < n; ++i) EXPECT_FLOAT_EQ(pb[i], -pa[i]) << i;
}

}  // namespace
}  // namespace anvil::te
