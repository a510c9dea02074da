// Packed and typed functions: calls, argument conversion and arity/type errors.
#include "anvil/runtime/function.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(Function, PackedBodySeesAllArguments) {
  Function f = Function::from_packed([](Args args) -> Value {
    int64_t sum = 0;
    for (const Value& v : args) sum += v.as_int();
    return Value(sum);
  });
  EXPECT_EQ(f(1, 2, 3, 4).as_int(), 10);
  EXPECT_EQ(f().as_int(), 0);
}

TEST(Function, TypedConvertsArgumentsAndResults) {
  auto concat = Function::from_typed([](const std::string& s, int n, double scale, bool flag) {
    return s + std::to_string(n) + (flag ? "+" : "-") + std::to_string(static_cast<int>(scale * 10));
  }, "concat");
  EXPECT_EQ(concat("x", 3, 1.5, true).as_string(), "x3+15");
  EXPECT_EQ(concat("y", 4, 2, false).as_string(), "y4-20");  // int widens to double
  auto nothing = Function::from_typed([](int) {});
  EXPECT_TRUE(nothing(1).is_null());
  auto tensor_fn = Function::from_typed([](Tensor t) { return static_cast<int64_t>(t.numel()); });
  EXPECT_EQ(tensor_fn(Tensor::empty({3, 5}, DataType::float32())).as_int(), 15);
  auto dtype_fn = Function::from_typed([](DataType t, Device d) { return t.to_string() + "@" + d.to_string(); });
  EXPECT_EQ(dtype_fn("int8", Device::cpu(1)).as_string(), "int8@cpu:1");
}

TEST(Function, WrongArityNamesTheFunction) {
  auto f = Function::from_typed([](int a, int b) { return a + b; }, "math.add");
  try {
    f(1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_STREQ(e.what(), "function 'math.add' expects 2 arguments but got 1");
  }
}

TEST(Function, WrongTypeNamesTheArgument) {
  auto f = Function::from_typed([](int a, const std::string& s) { return s + std::to_string(a); }, "fmt");
  try {
    f(1, 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("function 'fmt': argument 1: expected string but got int"),
              std::string::npos)
        << e.what();
  }
}

TEST(Function, ErrorsFromTheBodyPassThrough) {
  auto f = Function::from_typed([](int i) -> int { index_error("index ", i, " out of range"); });
  try {
    f(9);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIndex);
    EXPECT_STREQ(e.what(), "index 9 out of range");
  }
}

}  // namespace
}  // namespace anvil
