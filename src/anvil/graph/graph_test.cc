// Types, expressions, functions and the printer of the graph IR.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/printer.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::graph {
namespace {

TEST(GraphType, TensorShapesMayBeSymbolic) {
  ir::Var n = ir::size_var("n");
  Type t = Type::tensor({n, ir::int_imm(3)}, DataType::float32());
  EXPECT_EQ(to_string(t), "Tensor[(n, 3), float32]");
  EXPECT_EQ(t.ndim(), 2);
  EXPECT_FALSE(t.static_shape().has_value());
  EXPECT_EQ(Type::tensor(std::vector<int64_t>{2, 5}, DataType::int64()).static_shape(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(to_string(Type::tensor(std::vector<int64_t>{}, DataType::boolean())), "Tensor[(), bool]");
  EXPECT_EQ(to_string(Type::tensor(std::vector<int64_t>{7}, DataType::float16())), "Tensor[(7,), float16]");
  EXPECT_EQ(to_string(Type::tensor_any_rank(DataType::float32())), "Tensor[?, float32]");
  EXPECT_TRUE(type_equal(t, Type::tensor({n, ir::int_imm(3)}, DataType::float32())));
  EXPECT_FALSE(type_equal(t, Type::tensor({ir::size_var("n"), ir::int_imm(3)}, DataType::float32())));
}

TEST(GraphType, NegativeOrHugeDimensionsAreRejected) {
  EXPECT_THROW(Type::tensor(std::vector<int64_t>{-1}, DataType::float32()), Error);
  EXPECT_THROW(Type::tensor(std::vector<int64_t>{int64_t{1} << 40}, DataType::float32()), Error);
  EXPECT_THROW(Type::tensor_any_rank(DataType::float32()).shape(), Error);
}

TEST(GraphExpr, TuplesProjectTheirFieldTypes) {
  Var a = Var::make("a", Type::tensor(std::vector<int64_t>{2}, DataType::float32()));
  Var b = Var::make("b", Type::tensor(std::vector<int64_t>{3}, DataType::int32()));
  Expr t = Tuple::make({a, b});
  EXPECT_EQ(to_string(t.type()), "Tuple[Tensor[(2,), float32], Tensor[(3,), int32]]");
  EXPECT_TRUE(type_equal(TupleGetItem::make(t, 1).type(), b.type()));
  EXPECT_THROW(TupleGetItem::make(t, 2), Error);
  EXPECT_THROW(TupleGetItem::make(a, 0), Error);
}

TEST(GraphPrinter, PrintsBindingsConstantsAndUniqueNames) {
  ir::Var n = ir::size_var("n");
  BlockBuilder bb;
  Var x = bb.add_param("x", Type::tensor({n, ir::int_imm(2)}, DataType::float32()));
  Var x2 = bb.add_param("x", Type::tensor({n, ir::int_imm(2)}, DataType::float32()));
  Tensor c = Tensor::empty({2}, DataType::float32());
  static_cast<float*>(c.data())[0] = 0.5f;
  static_cast<float*>(c.data())[1] = -1.25f;
  Var t = bb.emit_var(Tuple::make({x, x2, Constant::make(c), ShapeExpr::make({n * 2})}), "t");
  Function f = bb.finish(TupleGetItem::make(t, 0));
  EXPECT_EQ(to_string(f),
            "def @main(%x: Tensor[(n, 2), float32], %x_1: Tensor[(n, 2), float32]) -> Tensor[(n, 2), float32] {\n"
            "  %t: Tuple[Tensor[(n, 2), float32], Tensor[(n, 2), float32], Tensor[(2,), float32], Shape[1]] = "
            "(%x, %x_1, const[0], shape(n * 2))\n"
            "  return %t.0\n"
            "}\n"
            "const[0]: Tensor[(2,), float32] = [0.5, -1.25]\n");
}

TEST(GraphBuilder, UnknownOperatorsAreValueErrors) {
  BlockBuilder bb;
  Var x = bb.add_param("x", Type::tensor(std::vector<int64_t>{2}, DataType::float32()));
  try {
    bb.call("no_such_op", {x});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("unknown graph operator 'no_such_op'"), std::string::npos);
  }
}

}  // namespace
}  // namespace anvil::graph
