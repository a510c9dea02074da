// The global function registry.
#include "anvil/runtime/registry.h"

#include <gtest/gtest.h>

#include "anvil/runtime/register.h"

namespace anvil {
namespace {

TEST(Registry, RegisterLookUpAndCallInOneStatement) {
  register_function("test.registry.add", [](int64_t a, int64_t b) { return a + b; });
  EXPECT_EQ(Registry::get("test.registry.add")(40, 2).as_int(), 42);
  EXPECT_TRUE(Registry::remove("test.registry.add"));
  EXPECT_FALSE(Registry::find("test.registry.add").has_value());
}

TEST(Registry, DuplicateNeedsOverride) {
  register_function("test.registry.dup", []() { return 1; });
  EXPECT_THROW(register_function("test.registry.dup", []() { return 2; }), Error);
  register_function("test.registry.dup", []() { return 3; }, /*override_existing=*/true);
  EXPECT_EQ(Registry::get("test.registry.dup")().as_int(), 3);
  Registry::remove("test.registry.dup");
}

TEST(Registry, ListsByPrefixInOrder) {
  register_function("test.list.b", []() {});
  register_function("test.list.a", []() {});
  register_function("test.listx", []() {});
  EXPECT_EQ(Registry::list("test.list."), (std::vector<std::string>{"test.list.a", "test.list.b"}));
  for (const auto& n : {"test.list.a", "test.list.b", "test.listx"}) Registry::remove(n);
}

TEST(Registry, MissingFunctionErrorSuggestsNeighbours) {
  register_runtime_functions();
  try {
    Registry::get("testing.ech");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    std::string msg = e.what();
    EXPECT_NE(msg.find("'testing.ech'"), std::string::npos);
    EXPECT_NE(msg.find("testing.echo"), std::string::npos) << msg;
  }
}

TEST(Registry, RuntimeFunctionsAreRegisteredOnceAndWork) {
  register_runtime_functions();
  register_runtime_functions();  // idempotent
  EXPECT_EQ(Registry::get("testing.echo")("hi").as_string(), "hi");
  Value t = Registry::get("runtime.tensor_empty")(Value::shape({2, 2}), "float64", Device::cpu());
  EXPECT_EQ(t.as_tensor().dtype(), DataType::float64());
  EXPECT_TRUE(Registry::get("runtime.device_exists")(Device::cpu()).as_bool());
  EXPECT_FALSE(Registry::get("runtime.device_exists")(Device{kDLExtDev, 0}).as_bool());
  EXPECT_GE(Registry::get("runtime.num_threads")().as_int(), 1);
}

}  // namespace
}  // namespace anvil
