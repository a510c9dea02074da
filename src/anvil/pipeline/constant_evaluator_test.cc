// Compile-time evaluation of calls on constants (what fold_constant hands to the pipeline).
#include "anvil/pipeline/constant_evaluator.h"

#include <gtest/gtest.h>

#include <random>

#include "anvil/graph/builder.h"

namespace anvil::pipeline {
namespace {

Tensor random_tensor(std::vector<int64_t> shape, uint64_t seed) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = u(rng);
  return t;
}

TEST(ConstantEvaluator, RunsTheKernelOfACallOnConstants) {
  Tensor w = random_tensor({5, 7}, 20261202);
  graph::BlockBuilder bb;
  graph::Expr call = bb.call("transpose", {graph::Constant::make(w)}, {{"axes", graph::AttrValue::ints({1, 0})}});
  std::optional<Tensor> out = evaluate_constant_call(*call.as<graph::CallNode>());
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->shape(), (std::vector<int64_t>{7, 5}));
  const auto* a = static_cast<const float*>(w.data());
  const auto* b = static_cast<const float*>(out->data());
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) EXPECT_EQ(b[j * 5 + i], a[i * 7 + j]) << i << "," << j;
}

TEST(ConstantEvaluator, DeclinesCallsOnNonConstantsAndHugeResults) {
  graph::BlockBuilder bb;
  graph::Var x = bb.add_param("x", graph::Type::tensor(std::vector<int64_t>{3}, DataType::float32()));
  graph::Expr relu = bb.call("relu", {x});
  EXPECT_FALSE(evaluate_constant_call(*relu.as<graph::CallNode>()).has_value());
  Tensor one = random_tensor({1}, 1);
  graph::Expr big = bb.call("broadcast_to", {graph::Constant::make(one), graph::ShapeExpr::make({ir::int_imm(1 << 25)})});
  EXPECT_FALSE(evaluate_constant_call(*big.as<graph::CallNode>()).has_value());
}

}  // namespace
}  // namespace anvil::pipeline
