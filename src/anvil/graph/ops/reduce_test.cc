// Type inference of the reduce operators: axes (negative, empty = all), keepdims, symbolic
// dims, argmax's int64, cumsum, topk's tuple (k an attr or a run-time Shape value), and the
// error texts.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/op_registry.h"

namespace anvil::graph {
namespace {

Type f32(std::vector<PrimExpr> shape) { return Type::tensor(std::move(shape), DataType::float32()); }
PrimExpr c(int64_t v) { return ir::int_imm(v); }

std::string infer(const std::string& op, Type arg, Attrs attrs = {}) {
  return to_string(infer_call_type(op, {Var::make("x", arg)}, attrs));
}

std::string failure(const std::string& op, Type arg, Attrs attrs = {}) {
  try {
    infer(op, std::move(arg), std::move(attrs));
  } catch (const Error& e) {
    return std::string(error_kind_name(e.kind())) + ": " + e.what();
  }
  return "no error";
}

TEST(ReduceTypes, AxesAndKeepdims) {
  ir::Var n = ir::size_var("n");
  Type t = f32({n, c(3), c(5)});
  EXPECT_EQ(infer("sum", t, {{"axes", AttrValue::ints({1})}}), "Tensor[(n, 1, 5), float32]");
  EXPECT_EQ(infer("mean", t, {{"axes", AttrValue::ints({-1, 0})}, {"keepdims", 0}}), "Tensor[(3,), float32]");
  EXPECT_EQ(infer("max", t, {{"keepdims", 0}}), "Tensor[(), float32]");
  EXPECT_EQ(infer("prod", t), "Tensor[(1, 1, 1), float32]");
  EXPECT_EQ(infer("min", Type::tensor({n, c(4)}, DataType::int32()), {{"axes", AttrValue::ints({1})}, {"keepdims", 0}}),
            "Tensor[(n,), int32]");
  EXPECT_EQ(infer("argmax", t, {{"axis", 1}}), "Tensor[(n, 1, 5), int64]");
  EXPECT_EQ(infer("argmin", t, {{"axis", -1}, {"keepdims", 0}}), "Tensor[(n, 3), int64]");
  EXPECT_EQ(infer("cumsum", t, {{"axis", 0}}), "Tensor[(n, 3, 5), float32]");
  EXPECT_EQ(infer("topk", t, {{"k", 2}, {"axis", 1}}), "Tuple[Tensor[(n, 2, 5), float32], Tensor[(n, 2, 5), int64]]");
}

// k known only at run time: a Shape of one value gives the outputs' axis (a constant one is
// still checked against the dimension).
TEST(ReduceTypes, TopkWithKAsAShapeValue) {
  ir::Var n = ir::size_var("n"), k = ir::size_var("K");
  Expr x = Var::make("x", f32({n, c(3), c(5)}));
  EXPECT_EQ(to_string(infer_call_type("topk", {x, ShapeExpr::make({k})}, {{"axis", 1}})),
            "Tuple[Tensor[(n, K, 5), float32], Tensor[(n, K, 5), int64]]");
  try {
    infer_call_type("topk", {x, ShapeExpr::make({c(4)})}, {{"axis", 1}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "topk: k is 4, expected 0 <= k <= dimension 1");
  }
}

TEST(ReduceTypes, Errors) {
  Type t = f32({c(2), c(3)});
  EXPECT_EQ(failure("sum", t, {{"axes", AttrValue::ints({2})}}), "IndexError: sum: axis 2 is out of range for rank 2");
  EXPECT_EQ(failure("sum", t, {{"axes", AttrValue::ints({1, -1})}}), "ValueError: sum: axis -1 is repeated");
  EXPECT_EQ(failure("sum", Type::tensor({c(2)}, DataType::boolean())),
            "TypeError: sum: argument 0 has dtype bool, expected an int, uint or float dtype");
  EXPECT_EQ(failure("topk", t, {{"k", 4}}), "ValueError: topk: k is 4, larger than dimension 1 of size 3");
  EXPECT_EQ(failure("sum", t, {{"axes", 1}}).substr(0, 10), "TypeError:");
  EXPECT_EQ(get_op("sum").pattern, OpPattern::kCommReduce);
}

}  // namespace
}  // namespace anvil::graph
