// fold_constant: golden text, with a small float32 evaluator standing in for the pipeline's.
#include "anvil/graph/passes/fold_constant.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

// add/multiply of float32 constants of one shape; anything else declined. Counts its calls.
struct TestEvaluator {
  int* calls;
  std::optional<Tensor> operator()(const CallNode& call) const {
    ++*calls;
    if (call.op() != "add" && call.op() != "multiply") return std::nullopt;
    const Tensor& a = call.args()[0].as<ConstantNode>()->data();
    const Tensor& b = call.args()[1].as<ConstantNode>()->data();
    if (a.shape() != b.shape() || a.dtype() != DataType::float32()) return std::nullopt;
    Tensor out = Tensor::empty(a.shape(), DataType::float32());
    const auto* x = static_cast<const float*>(a.data());
    const auto* y = static_cast<const float*>(b.data());
    auto* z = static_cast<float*>(out.data());
    for (int64_t i = 0; i < a.numel(); ++i) z[i] = call.op() == "add" ? x[i] + y[i] : x[i] * y[i];
    return out;
  }
};

TEST(GraphFoldConstant, StaticShapesFoldWithoutAnEvaluator) {
  expect_pass([](const IRModule& m) { return fold_constant(m); }, R"(
    def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(n, 3), float32]) -> Tuple[Tensor[(2,), int64], Tensor[(2,), int64], Tensor[(3, 2), float32]] {
      %s: Shape[2] = shape_of(%x)
      %t: Tensor[(2,), int64] = shape_to_tensor(%s)
      %sy: Shape[2] = shape_of(%y)         # symbolic: the VM computes it
      %ty: Tensor[(2,), int64] = shape_to_tensor(%sy)
      %r: Tensor[(3, 2), float32] = reshape(%x, shape(3, 2))
      %out: Tuple[Tensor[(2,), int64], Tensor[(2,), int64], Tensor[(3, 2), float32]] = (%t, %ty, %r)
      return %out
    }
  )",
              R"(
    def @main(%x: Tensor[(2, 3), float32], %y: Tensor[(n, 3), float32]) -> Tuple[Tensor[(2,), int64], Tensor[(2,), int64], Tensor[(3, 2), float32]] {
      %sy: Shape[2] = shape_of(%y)
      %ty: Tensor[(2,), int64] = shape_to_tensor(%sy)
      %r: Tensor[(3, 2), float32] = reshape(%x, shape(3, 2))
      %out: Tuple[Tensor[(2,), int64], Tensor[(2,), int64], Tensor[(3, 2), float32]] = (const[0], %ty, %r)
      return %out
    }
    const[0]: Tensor[(2,), int64] = [2, 3]
  )");
}

TEST(GraphFoldConstant, ConstantSubgraphsAreEvaluatedAndPropagated) {
  int calls = 0;
  expect_pass([&](const IRModule& m) { return fold_constant(m, TestEvaluator{&calls}); }, R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %a: Tensor[(2,), float32] = add(const[0], const[1])
      %alias: Tensor[(2,), float32] = %a
      %b: Tensor[(2,), float32] = multiply(%alias, const[1])
      %c: Tensor[(2,), float32] = add(%x, %b)
      %d: Tensor[(2,), float32] = relu(const[0])   # declined by the evaluator: stays
      %e: Tensor[(2,), float32] = subtract(%c, %d)
      return %e
    }
    const[0]: Tensor[(2,), float32] = [0.5, -3.0]
    const[1]: Tensor[(2,), float32] = [1.5, 2.0]
  )",
              R"(
    def @main(%x: Tensor[(2,), float32]) -> Tensor[(2,), float32] {
      %c: Tensor[(2,), float32] = add(%x, const[0])
      %d: Tensor[(2,), float32] = relu(const[1])
      %e: Tensor[(2,), float32] = subtract(%c, %d)
      return %e
    }
    const[0]: Tensor[(2,), float32] = [3.0, -2.0]
    const[1]: Tensor[(2,), float32] = [0.5, -3.0]
  )");
  EXPECT_EQ(calls, 3);  // add, multiply, relu; never a call with a non-constant argument
}

TEST(GraphFoldConstant, TupleLiteralsProjectToTheirFields) {
  expect_pass([](const IRModule& m) { return fold_constant(m); }, R"(
    def @main(%x: Tensor[(2,), float32], %y: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
      %t: Tuple[Tensor[(2,), float32], Tensor[(3,), float32]] = (%x, %y)
      %z: Tensor[(3,), float32] = exp(%t.1)
      return %z
    }
  )",
              R"(
    def @main(%x: Tensor[(2,), float32], %y: Tensor[(3,), float32]) -> Tensor[(3,), float32] {
      %t: Tuple[Tensor[(2,), float32], Tensor[(3,), float32]] = (%x, %y)   # unused now: DCE's job
      %z: Tensor[(3,), float32] = exp(%y)
      return %z
    }
  )");
}

TEST(GraphFoldConstant, NothingToFoldGivesTheSameFunction) {
  IRModule m = parse_module(R"(
    def @main(%x: Tensor[(n,), float32]) -> Tensor[(n,), float32] {
      %y: Tensor[(n,), float32] = add(%x, const[0])
      return %y
    }
    const[0]: Tensor[(1,), float32] = [2.5]
  )");
  int calls = 0;
  EXPECT_TRUE(fold_constant(m, TestEvaluator{&calls}).main().same_as(m.main()));
  EXPECT_EQ(calls, 0);
}

TEST(GraphFoldConstant, AnEvaluatorValueOfTheWrongShapeIsAnInternalError) {
  IRModule m = parse_module(R"(
    def @main() -> Tensor[(2,), float32] {
      %y: Tensor[(2,), float32] = relu(const[0])
      return %y
    }
    const[0]: Tensor[(2,), float32] = [2.5, -1.0]
  )");
  auto wrong = [](const CallNode&) -> std::optional<Tensor> { return Tensor::empty({3}, DataType::float32()); };
  try {
    fold_constant(m, wrong);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("expected Tensor[(2,), float32]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::graph::passes
