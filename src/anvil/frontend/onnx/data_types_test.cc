#include "anvil/frontend/onnx/data_types.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

TEST(OnnxDataTypes, NamesMatchTheCompiledProtoEnum) {
  // Every code the compiled onnx.proto knows has the proto's own name here.
  for (int code = TensorProto::DataType_MIN; code <= TensorProto::DataType_MAX; ++code) {
    if (!TensorProto::DataType_IsValid(code)) continue;
    EXPECT_EQ(onnx_dtype_name(code), TensorProto::DataType_Name(static_cast<TensorProto::DataType>(code)));
  }
  EXPECT_EQ(onnx_dtype_name(17), "FLOAT8E4M3FN");
  EXPECT_EQ(onnx_dtype_name(28), "FLOAT6E3M2");
  EXPECT_EQ(onnx_dtype_name(29), "<unknown data type 29>");
  EXPECT_EQ(onnx_dtype_name(-3), "<unknown data type -3>");
}

TEST(OnnxDataTypes, SupportedCodesMapToAnvilDtypes) {
  EXPECT_EQ(anvil_dtype(TensorProto::FLOAT), DataType::float32());
  EXPECT_EQ(anvil_dtype(TensorProto::FLOAT16), DataType::float16());
  EXPECT_EQ(anvil_dtype(TensorProto::DOUBLE), DataType::float64());
  EXPECT_EQ(anvil_dtype(TensorProto::BOOL), DataType::boolean());
  EXPECT_EQ(anvil_dtype(TensorProto::INT64), DataType::int64());
  EXPECT_EQ(anvil_dtype(TensorProto::UINT8), DataType::uint8());
  EXPECT_EQ(anvil_dtype(TensorProto::BFLOAT16), DataType::bfloat16());
  EXPECT_EQ(anvil_dtype(kOnnxFloat8E4M3FN), DataType::float8_e4m3fn());
  EXPECT_EQ(anvil_dtype(kOnnxFloat8E5M2FNUZ), DataType::float8_e5m2fnuz());
  EXPECT_EQ(anvil_dtype(kOnnxInt4), DataType::int4());
  EXPECT_EQ(anvil_dtype(kOnnxUInt4), DataType::uint4());
  EXPECT_EQ(anvil_dtype(kOnnxFloat4E2M1), DataType::float4_e2m1fn());
  EXPECT_EQ(anvil_dtype(26), DataType::int2());
  EXPECT_EQ(anvil_dtype(kOnnxFloat8E8M0), DataType::float8_e8m0fnu());
  EXPECT_EQ(anvil_dtype(27), std::nullopt);  // FLOAT6E2M3
  EXPECT_EQ(anvil_dtype(TensorProto::STRING), std::nullopt);
  EXPECT_EQ(onnx_dtype_bits(22), 4);
  EXPECT_EQ(onnx_dtype_bits(TensorProto::COMPLEX128), 128);
  EXPECT_EQ(display_dtype_name(TensorProto::FLOAT), "float32");
  EXPECT_EQ(display_dtype_name(19), "float8_e5m2");
  EXPECT_EQ(display_dtype_name(24), "float8_e8m0fnu");
  EXPECT_EQ(display_dtype_name(28), "float6e3m2");
}

TEST(OnnxDataTypes, OrThrowSaysWhatAndWhy) {
  ErrorKind kind{};
  std::string msg = testing::error_of([&] { anvil_dtype_or_throw(TensorProto::COMPLEX64, "input 'z'"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("input 'z': data type COMPLEX64 is not supported"), std::string::npos) << msg;
  msg = testing::error_of([&] { anvil_dtype_or_throw(0, "input 'z'"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(msg.find("UNDEFINED"), std::string::npos) << msg;
  msg = testing::error_of([&] { anvil_dtype_or_throw(40, "input 'z'"); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(msg.find("data type 40 is not an ONNX data type"), std::string::npos) << msg;
}

}  // namespace
}  // namespace anvil::frontend::onnx
