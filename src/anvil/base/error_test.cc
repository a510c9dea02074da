// Error kinds, names, message helpers and the internal check.
#include "anvil/base/error.h"

#include <gtest/gtest.h>

namespace anvil {
namespace {

TEST(Error, HelpersThrowTheirKindWithTheMessage) {
  try {
    value_error("reshape: ", 6, " elements cannot become shape ", "[4]");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_STREQ(e.what(), "reshape: 6 elements cannot become shape [4]");
  }
  EXPECT_THROW(type_error("x"), Error);
  try {
    index_error("i=", 5);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIndex);
  }
}

TEST(Error, KindNamesAndCodesRoundTrip) {
  EXPECT_EQ(error_kind_name(ErrorKind::kValue), "ValueError");
  EXPECT_EQ(error_kind_name(ErrorKind::kIO), "IOError");
  for (int code = 1; code <= 7; ++code) EXPECT_EQ(static_cast<int>(error_kind_from_code(code)), code);
  EXPECT_EQ(error_kind_from_code(99), ErrorKind::kRuntime);
}

TEST(Error, InternalCheckNamesTheConditionAndIsInternal) {
  try {
    int x = 3;
    ANVIL_ICHECK(x == 4, "x is ", x);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
    EXPECT_NE(std::string(e.what()).find("x == 4"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("x is 3"), std::string::npos);
  }
  EXPECT_NO_THROW(ANVIL_ICHECK(1 + 1 == 2));
}

}  // namespace
}  // namespace anvil
