// Value kinds, checked conversions and reference counting.
#include "anvil/runtime/value.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/tensor.h"

namespace anvil {
namespace {

TEST(Value, CarriesEveryKind) {
  EXPECT_TRUE(Value().is_null());
  EXPECT_EQ(Value(42).as_int(), 42);
  EXPECT_EQ(Value(int64_t{-7}).kind(), ValueKind::kInt);
  EXPECT_DOUBLE_EQ(Value(2.5).as_float(), 2.5);
  EXPECT_EQ(Value(true).kind(), ValueKind::kBool);
  EXPECT_TRUE(Value(true).as_bool());
  EXPECT_EQ(Value("text").as_string(), "text");
  EXPECT_EQ(Value::bytes(std::string("\0\1", 2)).as_bytes().size(), 2u);
  EXPECT_EQ(Value(Device::cuda(1)).as_device(), Device::cuda(1));
  EXPECT_EQ(Value(DataType::bfloat16()).as_dtype(), DataType::bfloat16());
  EXPECT_EQ(Value::shape({2, 3}).as_shape(), (std::vector<int64_t>{2, 3}));
  int x = 0;
  EXPECT_EQ(Value::handle(&x).as_handle(), &x);
  Tensor t = Tensor::empty({2}, DataType::float32());
  EXPECT_TRUE(Value(t).as_tensor().same_as(t));
  Function f = Function::from_typed([](int64_t a) { return a * 2; });
  EXPECT_EQ(Value(f).as_function()(21).as_int(), 42);
  Module m = make_params_module({});
  EXPECT_TRUE(Value(m).as_module().same_as(m));
  Value arr(std::vector<Value>{Value(1), Value("two")});
  EXPECT_EQ(arr.as_array().size(), 2u);
  EXPECT_EQ(arr.as_array()[1].as_string(), "two");
}

TEST(Value, ConversionsFollowNumpyRules) {
  EXPECT_DOUBLE_EQ(Value(3).as_float(), 3.0);  // int widens to float
  EXPECT_EQ(Value(true).as_int(), 1);
  EXPECT_EQ(Value("float16").as_dtype(), DataType::float16());  // dtype from string
  EXPECT_EQ(Value("cuda:2").as_device(), Device::cuda(2));
  EXPECT_EQ(Value().as_handle(), nullptr);
}

TEST(Value, WrongKindNamesExpectedAndActual) {
  try {
    Value("abc").as_int();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType);
    EXPECT_NE(std::string(e.what()).find("expected int but got string"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Value(1.5).as_int(), Error);
  EXPECT_THROW(Value(1).as_tensor(), Error);
  EXPECT_THROW(Value().as_string(), Error);
  EXPECT_THROW(Value(3).as_shape(), Error);
  EXPECT_THROW(Value("x").as_function(), Error);
  EXPECT_THROW(Value("nope").as_dtype(), Error);
}

TEST(Value, CopiesAndMovesManageReferences) {
  Tensor t = Tensor::empty({4}, DataType::int32());
  EXPECT_EQ(t.node()->use_count(), 1);
  {
    Value a(t);
    Value b = a;
    EXPECT_EQ(t.node()->use_count(), 3);
    Value c = std::move(b);
    EXPECT_TRUE(b.is_null());
    EXPECT_EQ(t.node()->use_count(), 3);
    c = Value(5);
    EXPECT_EQ(t.node()->use_count(), 2);
  }
  EXPECT_EQ(t.node()->use_count(), 1);
}

TEST(Value, PrintsReadably) {
  EXPECT_EQ(Value().to_string(), "None");
  EXPECT_EQ(Value(true).to_string(), "True");
  EXPECT_EQ(Value(Device::cpu()).to_string(), "cpu:0");
  EXPECT_EQ(Value::shape({1, 2}).to_string(), "shape[1, 2]");
  EXPECT_EQ(Value(Tensor::empty({2, 3}, DataType::float32())).to_string(),
            "Tensor(shape=[2, 3], dtype=float32, device=cpu:0)");
}

}  // namespace
}  // namespace anvil
