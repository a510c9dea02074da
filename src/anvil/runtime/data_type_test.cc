// Data type parsing, printing and sizes.
#include "anvil/runtime/data_type.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"

namespace anvil {
namespace {

TEST(DataType, ParsesAndPrintsEveryTensorType) {
  for (const char* name : {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                           "float16", "float32", "float64", "bfloat16", "float8_e4m3fn", "float8_e4m3fnuz",
                           "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn", "int4", "uint4", "int2", "uint2"}) {
    DataType t = DataType::parse(name);
    EXPECT_EQ(t.to_string(), name);
    EXPECT_TRUE(t.is_tensor_element()) << name;
  }
  EXPECT_EQ(DataType::parse("float32x4"), DataType(DataType::kFloat, 32, 4));
  EXPECT_EQ(DataType::parse("float32x4").to_string(), "float32x4");
  EXPECT_FALSE(DataType::parse("float32x4").is_tensor_element());
}

TEST(DataType, SizesInBytes) {
  EXPECT_EQ(DataType::boolean().bytes(), 1u);
  EXPECT_EQ(DataType::bfloat16().bytes(), 2u);
  EXPECT_EQ(DataType::float64().bytes(), 8u);
  EXPECT_EQ(DataType(DataType::kFloat, 32, 8).bytes(), 32u);
  // Sub-byte types take one byte per element.
  EXPECT_EQ(DataType::int4().bytes(), 1u);
  EXPECT_EQ(DataType::uint2().bytes(), 1u);
  EXPECT_EQ(DataType::float4_e2m1fn().bytes(), 1u);
  EXPECT_EQ(DataType(DataType::kInt, 4, 4).bytes(), 4u);
  EXPECT_EQ(DataType::float8_e5m2().bytes(), 1u);
}

TEST(DataType, LowPrecisionCodesFollowDlpack) {
  EXPECT_EQ(DataType::float8_e4m3fn().code(), 10);
  EXPECT_EQ(DataType::float8_e5m2fnuz().code(), 13);
  EXPECT_EQ(DataType::float8_e8m0fnu().code(), 14);
  EXPECT_EQ(DataType::float4_e2m1fn().code(), 17);
  EXPECT_TRUE(DataType::float8_e8m0fnu().is_low_precision_float());
  EXPECT_TRUE(DataType::float8_e4m3fnuz().is_float());
  EXPECT_TRUE(DataType::bfloat16().is_low_precision_float());
  EXPECT_FALSE(DataType::float16().is_low_precision_float());
  EXPECT_TRUE(DataType::int4().is_sub_byte_int());
  EXPECT_FALSE(DataType::int8().is_sub_byte_int());
  EXPECT_EQ(DataType::parse("float8_e5m2x4"), DataType(DataType::kFloat8E5M2, 8, 4));
  EXPECT_FALSE(DataType(DataType::kFloat8E5M2, 16).is_tensor_element());
}

TEST(DataType, RejectsMalformedNamesWithAClearMessage) {
  for (const char* bad : {"", "float", "flot32", "int0", "int-8", "float32x", "float32x0", "uint", "int300"}) {
    try {
      DataType::parse(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      EXPECT_NE(std::string(e.what()).find(std::string("'") + bad + "'"), std::string::npos) << e.what();
    }
  }
  EXPECT_FALSE(DataType(DataType::kInt, 3).is_tensor_element());
  EXPECT_FALSE(DataType(DataType::kBFloat, 32).is_tensor_element());
}

}  // namespace
}  // namespace anvil
