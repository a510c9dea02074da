// Expression printing: literals, precedence-driven parentheses, name disambiguation.
#include "anvil/ir/printer.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"

namespace anvil::ir {
namespace {

TEST(ExprPrinter, LiteralsShowTheirDtype) {
  EXPECT_EQ(to_string(PrimExpr(7)), "7");
  EXPECT_EQ(to_string(int_imm(7, DataType::int64())), "int64(7)");
  EXPECT_EQ(to_string(bool_imm(true)), "True");
  EXPECT_EQ(to_string(float_imm(1.5)), "1.5f");
  EXPECT_EQ(to_string(float_imm(2, DataType::float64())), "2.0");
  EXPECT_EQ(to_string(float_imm(0.1)), "0.1f");
  EXPECT_EQ(to_string(float_imm(1, DataType::float16())), "float16(1.0)");
  EXPECT_EQ(to_string(string_imm("a\"b")), "\"a\\\"b\"");
}

TEST(ExprPrinter, ParenthesesOnlyWherePrecedenceNeedsThem) {
  Var a("a"), b("b"), c("c");
  EXPECT_EQ(to_string(a + b * c), "a + b * c");
  EXPECT_EQ(to_string((a + b) * c), "(a + b) * c");
  EXPECT_EQ(to_string(a - b - c), "a - b - c");
  EXPECT_EQ(to_string(a - (b - c)), "a - (b - c)");
  EXPECT_EQ(to_string(a + (b + c)), "a + (b + c)");
  EXPECT_EQ(to_string(floordiv(a, b + 1)), "a // (b + 1)");
  EXPECT_EQ(to_string(floormod(a * 4, 3)), "a * 4 % 3");
  EXPECT_EQ(to_string(a * -1), "a * -1");
  EXPECT_EQ(to_string(a < b && b <= c), "a < b and b <= c");
  EXPECT_EQ(to_string(logical_and(a < b || b<c, c> 0)), "(a < b or b < c) and c > 0");
  EXPECT_EQ(to_string(!(a < b)), "not a < b");
  EXPECT_EQ(to_string(!logical_and(a < b, b < c)), "not (a < b and b < c)");
  EXPECT_EQ(to_string(eq(a < b, b < c)), "(a < b) == (b < c)");
  EXPECT_EQ(to_string(min(a, b + c) * 2), "min(a, b + c) * 2");
}

TEST(ExprPrinter, DivisionFormsAreDistinct) {
  Var a("a"), b("b");
  Var x("x", DataType::float32());
  EXPECT_EQ(to_string(a / b), "truncdiv(a, b)");
  EXPECT_EQ(to_string(x / 2), "x / 2.0f");
  EXPECT_EQ(to_string(floordiv(a, b)), "a // b");
}

TEST(ExprPrinter, OtherForms) {
  Var i("i"), x("x", DataType::float32());
  Buffer A = decl_buffer({16, 16}, DataType::float32(), "A");
  EXPECT_EQ(to_string(buffer_load(A, {i, i + 1})), "A[i, i + 1]");
  EXPECT_EQ(to_string(buffer_load(A, {i, ramp(i * 4, 1, 4)})), "A[i, ramp(i * 4, 1, 4)]");
  EXPECT_EQ(to_string(select(i < 2, x, 0)), "select(i < 2, x, 0.0f)");
  EXPECT_EQ(to_string(cast(DataType::float32(), i) + x), "float32(i) + x");
  EXPECT_EQ(to_string(broadcast(x, 8)), "broadcast(x, 8)");
  EXPECT_EQ(to_string(exp(x) + fma(x, x, 1)), "exp(x) + fma(x, x, 1.0f)");
  Var t("t");
  EXPECT_EQ(to_string(let(t, i + 1, t * t) + 1), "(let t = i + 1 in t * t) + 1");
}

TEST(ExprPrinter, DistinctVarsWithOneNameGetSuffixes) {
  Var i1("i"), i2("i");
  EXPECT_EQ(to_string(i1 + i2 + i1), "i + i_1 + i");
}

TEST(ExprPrinter, LetsInSiblingScopesKeepTheirNamesNestedOnesAreSuffixed) {
  Var x1("x"), x2("x"), y("y");
  // Two lets of distinct vars named x side by side: no clash, both print as x.
  EXPECT_EQ(to_string(let(x1, y + 1, x1 * 2) + let(x2, y + 2, x2 * 3)),
            "(let x = y + 1 in x * 2) + (let x = y + 2 in x * 3)");
  // Nested: the inner x is visible together with the outer one.
  EXPECT_EQ(to_string(let(x1, y, let(x2, x1 + 1, x1 + x2))), "let x = y in let x_1 = x + 1 in x + x_1");
  // A free var named like a let var in scope is a clash too.
  Var free_x("x");
  EXPECT_EQ(to_string(let(x1, 1, x1 + free_x)), "let x = 1 in x + x_1");
}

TEST(ExprPrinter, ViewsOfOneAllocationShareTheirNameDistinctBuffersGetSuffixes) {
  Var data("A", handle_type());
  Buffer a2 = Buffer::make(data, DataType::float32(), {4, 4}, {}, {}, "A", kDefaultBufferAlignment, "global");
  Buffer a1 = Buffer::make(data, DataType::float32(), {16}, {}, {}, "A", kDefaultBufferAlignment, "global");
  Buffer other = decl_buffer({16}, DataType::float32(), "A");
  Var i("i");
  EXPECT_EQ(to_string(buffer_load(a2, {i, 1}) + buffer_load(a1, {i * 4 + 1}) + buffer_load(other, {i})),
            "A[i, 1] + A[i * 4 + 1] + A_1[i]");
}

TEST(ExprPrinter, BufferDeclListsNonDefaults) {
  Var n = size_var("n");
  EXPECT_EQ(to_string(decl_buffer({n, 4}, DataType::float16(), "X")), "X: Buffer(float16, [n, 4])");
  Buffer s = Buffer::make(Var("d", handle_type()), DataType::int8(), {8}, {2}, 1, "S", 16, "shared");
  EXPECT_EQ(to_string(s), "S: Buffer(int8, [8], strides=[2], offset=1, align=16, scope=\"shared\")");
}

}  // namespace
}  // namespace anvil::ir
