// Type inference of the elementwise operators: unary dtypes, numpy broadcasting of static and
// symbolic shapes, comparisons to bool, cast, where, prelu, and the TypeError/ValueError texts.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/op_registry.h"

namespace anvil::graph {
namespace {

Type f32(std::vector<PrimExpr> shape) { return Type::tensor(std::move(shape), DataType::float32()); }
PrimExpr c(int64_t v) { return ir::int_imm(v); }

std::string infer(const std::string& op, std::vector<Type> args, Attrs attrs = {}) {
  std::vector<Expr> vars;
  for (size_t i = 0; i < args.size(); ++i) vars.push_back(Var::make("a" + std::to_string(i), args[i]));
  return to_string(infer_call_type(op, vars, attrs));
}

// The error's kind and message of a failing inference.
std::string failure(const std::string& op, std::vector<Type> args, Attrs attrs = {}) {
  try {
    infer(op, std::move(args), std::move(attrs));
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(ElementwiseTypes, UnaryKeepsTheType) {
  ir::Var n = ir::size_var("n");
  EXPECT_EQ(infer("exp", {f32({n, c(3)})}), "Tensor[(n, 3), float32]");
  EXPECT_EQ(infer("relu", {Type::tensor({c(2)}, DataType::int32())}), "Tensor[(2,), int32]");
  EXPECT_EQ(infer("gelu", {f32({c(4)})}, {{"approximate", "tanh"}}), "Tensor[(4,), float32]");
  EXPECT_EQ(infer("tanh", {Type::tensor({n}, DataType::float16())}), "Tensor[(n,), float16]");
  EXPECT_EQ(infer("isnan", {f32({n})}), "Tensor[(n,), bool]");
  EXPECT_EQ(infer("cast", {f32({n})}, {{"dtype", DataType::int64()}}), "Tensor[(n,), int64]");
  EXPECT_EQ(infer("clip", {f32({c(5)})}, {{"min", 0.0}}), "Tensor[(5,), float32]");
  EXPECT_EQ(infer("sigmoid", {Type::tensor_any_rank(DataType::float32())}), "Tensor[?, float32]");
}

TEST(ElementwiseTypes, UnaryDtypeErrors) {
  EXPECT_EQ(failure("exp", {Type::tensor({c(2)}, DataType::int32())}),
            "TypeError: exp: argument 0 has dtype int32, expected a float dtype");
  EXPECT_EQ(failure("logical_not", {f32({c(2)})}), "TypeError: logical_not: argument 0 has dtype float32, expected bool");
  EXPECT_EQ(failure("bitwise_not", {f32({c(2)})}),
            "TypeError: bitwise_not: argument 0 has dtype float32, expected an int or uint dtype");
  EXPECT_EQ(failure("negative", {Type::tensor({c(2)}, DataType::uint8())}),
            "TypeError: negative: argument 0 has dtype uint8, expected an int or float dtype");
  EXPECT_NE(failure("gelu", {f32({c(2)})}, {{"approximate", "fast"}}).find("ValueError"), std::string::npos);
}

TEST(ElementwiseTypes, BinaryBroadcastsStaticAndSymbolicShapes) {
  ir::Var n = ir::size_var("n"), m = ir::size_var("m");
  EXPECT_EQ(infer("add", {f32({c(4), c(1), c(3)}), f32({c(5), c(1)})}), "Tensor[(4, 5, 3), float32]");
  EXPECT_EQ(infer("multiply", {f32({n, c(1)}), f32({c(7)})}), "Tensor[(n, 7), float32]");
  EXPECT_EQ(infer("subtract", {f32({c(1), m}), f32({n, c(1)})}), "Tensor[(n, m), float32]");
  EXPECT_EQ(infer("add", {f32({}), f32({n})}), "Tensor[(n,), float32]");
  EXPECT_EQ(infer("less", {f32({n, c(2)}), f32({c(2)})}), "Tensor[(n, 2), bool]");
  EXPECT_EQ(infer("equal", {Type::tensor({c(3)}, DataType::boolean()), Type::tensor({c(3)}, DataType::boolean())}),
            "Tensor[(3,), bool]");
  EXPECT_EQ(infer("where", {Type::tensor({n, c(1)}, DataType::boolean()), f32({c(4)}), f32({c(1)})}),
            "Tensor[(n, 4), float32]");
  EXPECT_EQ(infer("prelu", {f32({n, c(3), c(5), c(5)}), f32({c(3), c(1), c(1)})}), "Tensor[(n, 3, 5, 5), float32]");
}

TEST(ElementwiseTypes, BinaryErrors) {
  EXPECT_EQ(failure("add", {f32({c(3)}), f32({c(4)})}), "ValueError: add: shapes (3) and (4) do not broadcast");
  EXPECT_EQ(failure("add", {f32({c(3)}), Type::tensor({c(3)}, DataType::int32())}),
            "TypeError: add: arguments 0 and 1 have dtypes float32 and int32, expected the same");
  EXPECT_EQ(failure("logical_and", {f32({c(3)}), f32({c(3)})}),
            "TypeError: logical_and: argument 0 has dtype float32, expected bool");
  EXPECT_EQ(failure("where", {f32({c(3)}), f32({c(3)}), f32({c(3)})}),
            "TypeError: where: argument 0 has dtype float32, expected bool");
  EXPECT_NE(failure("prelu", {f32({c(3)}), f32({c(2), c(3)})}).find("ValueError"), std::string::npos);
  EXPECT_NE(failure("add", {f32({c(3)})}).find("add"), std::string::npos);  // arity
}

TEST(ElementwiseTypes, Patterns) {
  EXPECT_EQ(get_op("exp").pattern, OpPattern::kElemwise);
  EXPECT_EQ(get_op("add").pattern, OpPattern::kBroadcast);
  EXPECT_EQ(get_op("where").pattern, OpPattern::kBroadcast);
}

}  // namespace
}  // namespace anvil::graph
