#include "anvil/frontend/onnx/tensor_proto.h"

#include <gtest/gtest.h>

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

using testing::rng;

struct DtypeCase {
  int32_t code;
  DataType dtype;
};

std::string case_name(const ::testing::TestParamInfo<DtypeCase>& info) { return info.param.dtype.to_string(); }

// numel random elements of the dtype as little-endian bytes: floats in [-100, 100), float16 bit
// patterns that are finite, integers over the whole range, bools 0/1.
std::string random_elements(int32_t code, DataType dt, int64_t numel) {
  std::string bytes(static_cast<size_t>(numel) * dt.bytes(), '\0');
  std::uniform_real_distribution<double> real(-100.0, 100.0);
  std::uniform_int_distribution<uint64_t> bits;
  for (int64_t i = 0; i < numel; ++i) {
    char* p = bytes.data() + i * dt.bytes();
    if (code == TensorProto::FLOAT) {
      float v = static_cast<float>(real(rng()));
      std::memcpy(p, &v, 4);
    } else if (code == TensorProto::DOUBLE) {
      double v = real(rng());
      std::memcpy(p, &v, 8);
    } else if (code == TensorProto::FLOAT16) {
      uint16_t v = static_cast<uint16_t>(bits(rng()));
      if (((v >> 10) & 0x1f) == 0x1f) v &= 0xbfff;  // exponent 31 is inf/NaN: clear one bit
      std::memcpy(p, &v, 2);
    } else if (code == TensorProto::BOOL) {
      *p = static_cast<char>(bits(rng()) & 1);
    } else {
      uint64_t v = bits(rng());
      std::memcpy(p, &v, dt.bytes());
    }
  }
  return bytes;
}

template <typename T>
T element(const std::string& bytes, int64_t i) {
  T v;
  std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

// The same elements in the typed field onnx.proto prescribes for the dtype.
void fill_typed(TensorProto* t, int32_t code, const std::string& bytes, int64_t numel) {
  for (int64_t i = 0; i < numel; ++i) {
    switch (code) {
      case TensorProto::FLOAT:
        t->add_float_data(element<float>(bytes, i));
        break;
      case TensorProto::DOUBLE:
        t->add_double_data(element<double>(bytes, i));
        break;
      case TensorProto::INT64:
        t->add_int64_data(element<int64_t>(bytes, i));
        break;
      case TensorProto::UINT64:
        t->add_uint64_data(element<uint64_t>(bytes, i));
        break;
      case TensorProto::UINT32:
        t->add_uint64_data(element<uint32_t>(bytes, i));
        break;
      case TensorProto::INT32:
        t->add_int32_data(element<int32_t>(bytes, i));
        break;
      case TensorProto::INT16:
        t->add_int32_data(element<int16_t>(bytes, i));
        break;
      case TensorProto::INT8:
        t->add_int32_data(element<int8_t>(bytes, i));
        break;
      case TensorProto::UINT16:
        t->add_int32_data(element<uint16_t>(bytes, i));
        break;
      case TensorProto::FLOAT16:
      case TensorProto::BFLOAT16:
        t->add_int32_data(element<uint16_t>(bytes, i));
        break;
      case kOnnxFloat8E4M3FN:
      case kOnnxFloat8E4M3FNUZ:
      case kOnnxFloat8E5M2:
      case kOnnxFloat8E5M2FNUZ:
      case kOnnxFloat8E8M0:
      case TensorProto::UINT8:
      case TensorProto::BOOL:
        t->add_int32_data(element<uint8_t>(bytes, i));
        break;
      default:
        FAIL() << "no typed field for " << code;
    }
  }
}

TensorProto make_tensor(const std::string& name, int32_t code, std::vector<int64_t> dims) {
  TensorProto t;
  t.set_name(name);
  t.set_data_type(code);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

std::string tensor_bytes(const Tensor& t) { return std::string(static_cast<const char*>(t.data()), t.nbytes()); }

class TensorProtoDtype : public ::testing::TestWithParam<DtypeCase> {};

TEST_P(TensorProtoDtype, RawDataRoundTripsRandomValues) {
  const auto [code, dt] = GetParam();
  for (std::vector<int64_t> dims : {std::vector<int64_t>{2, 3, 5}, {7}, {}, {4, 0}}) {
    int64_t numel = 1;
    for (int64_t d : dims) numel *= d;
    std::string expected = random_elements(code, dt, numel);
    TensorProto proto = make_tensor("w", code, dims);
    proto.set_raw_data(expected);
    Tensor t = tensor_from_proto(proto);
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(t.shape(), dims);
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_EQ(t.device(), Device::cpu());
    EXPECT_EQ(tensor_bytes(t), expected) << shape_to_string(dims);
  }
}

TEST_P(TensorProtoDtype, TypedFieldRoundTripsRandomValues) {
  const auto [code, dt] = GetParam();
  for (std::vector<int64_t> dims : {std::vector<int64_t>{3, 4}, {1}, {}}) {
    int64_t numel = 1;
    for (int64_t d : dims) numel *= d;
    std::string expected = random_elements(code, dt, numel);
    TensorProto proto = make_tensor("w", code, dims);
    fill_typed(&proto, code, expected, numel);
    Tensor t = tensor_from_proto(proto);
    EXPECT_EQ(t.dtype(), dt);
    EXPECT_EQ(t.shape(), dims);
    EXPECT_EQ(tensor_bytes(t), expected) << shape_to_string(dims);
  }
}

TEST_P(TensorProtoDtype, RawDataOfTheWrongLengthNamesTheTensorAndBothLengths) {
  const auto [code, dt] = GetParam();
  TensorProto proto = make_tensor("conv1.weight", code, {2, 3});
  proto.set_raw_data(std::string(6 * dt.bytes() - 1, '\1'));
  ErrorKind kind{};
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(msg.find("conv1.weight"), std::string::npos) << msg;
  EXPECT_NE(msg.find(str_cat("holds ", 6 * dt.bytes() - 1, " bytes")), std::string::npos) << msg;
  EXPECT_NE(msg.find(str_cat("expected ", 6 * dt.bytes())), std::string::npos) << msg;
}

TEST_P(TensorProtoDtype, TypedFieldOfTheWrongCountNamesTheTensorAndBothCounts) {
  const auto [code, dt] = GetParam();
  TensorProto proto = make_tensor("b", code, {5});
  fill_typed(&proto, code, random_elements(code, dt, 4), 4);
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(msg.find("tensor 'b'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("holds 4 values; expected 5"), std::string::npos) << msg;
}

INSTANTIATE_TEST_SUITE_P(
    Dtypes, TensorProtoDtype,
    ::testing::Values(
        DtypeCase{TensorProto::FLOAT, DataType::float32()}, DtypeCase{TensorProto::FLOAT16, DataType::float16()},
        DtypeCase{TensorProto::DOUBLE, DataType::float64()}, DtypeCase{TensorProto::INT8, DataType::int8()},
        DtypeCase{TensorProto::UINT8, DataType::uint8()}, DtypeCase{TensorProto::INT16, DataType::int16()},
        DtypeCase{TensorProto::UINT16, DataType::uint16()}, DtypeCase{TensorProto::INT32, DataType::int32()},
        DtypeCase{TensorProto::INT64, DataType::int64()}, DtypeCase{TensorProto::UINT32, DataType::uint32()},
        DtypeCase{TensorProto::UINT64, DataType::uint64()}, DtypeCase{TensorProto::BOOL, DataType::boolean()},
        // bit patterns, any of them (NaNs included) kept as they are
        DtypeCase{TensorProto::BFLOAT16, DataType::bfloat16()}, DtypeCase{kOnnxFloat8E4M3FN, DataType::float8_e4m3fn()},
        DtypeCase{kOnnxFloat8E4M3FNUZ, DataType::float8_e4m3fnuz()}, DtypeCase{kOnnxFloat8E5M2, DataType::float8_e5m2()},
        DtypeCase{kOnnxFloat8E5M2FNUZ, DataType::float8_e5m2fnuz()},
        DtypeCase{kOnnxFloat8E8M0, DataType::float8_e8m0fnu()}),
    case_name);

TEST(TensorProto, ZeroDimTensorHoldsOneElement) {
  TensorProto proto = make_tensor("scale", TensorProto::FLOAT, {});
  proto.add_float_data(0.125f);
  Tensor t = tensor_from_proto(proto);
  EXPECT_EQ(t.ndim(), 0);
  EXPECT_EQ(t.numel(), 1);
  EXPECT_EQ(*static_cast<float*>(t.data()), 0.125f);
}

TEST(TensorProto, MissingDataSaysSo) {
  TensorProto proto = make_tensor("shape", TensorProto::INT64, {2});
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(msg.find("tensor 'shape' (int64, shape [2]): has no data"), std::string::npos) << msg;
}

TEST(TensorProto, NegativeAndOverflowingDimsAreValueErrors) {
  TensorProto neg = make_tensor("n", TensorProto::FLOAT, {2, -3});
  ErrorKind kind{};
  std::string msg = testing::error_of([&] { tensor_from_proto(neg); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(msg.find("dims[1] is -3"), std::string::npos) << msg;

  TensorProto big = make_tensor("big", TensorProto::FLOAT, {int64_t{1} << 40, int64_t{1} << 40});
  big.set_raw_data("abcd");
  msg = testing::error_of([&] { tensor_from_proto(big); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_NE(msg.find("overflow"), std::string::npos) << msg;

  // Fits int64 elements but not bytes: 2^62 float32 elements.
  TensorProto bytes = make_tensor("bytes", TensorProto::FLOAT, {int64_t{1} << 31, int64_t{1} << 31});
  bytes.set_raw_data("abcd");
  msg = testing::error_of([&] { tensor_from_proto(bytes); }, &kind);
  EXPECT_NE(msg.find("overflow"), std::string::npos) << msg;
}

TEST(TensorProto, UnsupportedDtypesAreNotImplementedAndNamed) {
  for (auto [code, name] : std::vector<std::pair<int32_t, std::string>>{{TensorProto::STRING, "STRING"},
                                                                        {TensorProto::COMPLEX64, "COMPLEX64"},
                                                                        {TensorProto::COMPLEX128, "COMPLEX128"},
                                                                        {27, "FLOAT6E2M3"}}) {
    TensorProto proto = make_tensor("q", code, {1});
    proto.set_raw_data("\x01\x02", 2);
    ErrorKind kind{};
    std::string msg = testing::error_of([&] { tensor_from_proto(proto); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kNotImplemented) << name;
    EXPECT_NE(msg.find("tensor 'q'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("data type " + name + " is not supported"), std::string::npos) << msg;
  }
}

// int4 / uint4 / int2 / uint2 / float4e2m1 come packed (element 0 in the low bits of byte 0) and
// are kept one per byte, in the low bits.
TEST(TensorProto, SubByteTypesAreUnpackedOnePerByte) {
  TensorProto i4 = make_tensor("q", kOnnxInt4, {5});
  i4.set_raw_data("\x21\xf3\x08", 3);  // 1, 2, 3, -1 (0xf), -8 (0x8)
  Tensor t = tensor_from_proto(i4);
  EXPECT_EQ(t.dtype(), DataType::int4());
  EXPECT_EQ(tensor_bytes(t), std::string("\x01\x02\x03\x0f\x08", 5));

  TensorProto u4 = make_tensor("u", kOnnxUInt4, {3});
  u4.add_int32_data(0xa5);  // int32_data: one packed byte per value
  u4.add_int32_data(0x0c);
  EXPECT_EQ(tensor_bytes(tensor_from_proto(u4)), std::string("\x05\x0a\x0c", 3));

  TensorProto i2 = make_tensor("p", 26, {5});  // INT2
  i2.set_raw_data("\xe4\x03", 2);               // 0, 1, 2, 3 | 3
  EXPECT_EQ(tensor_bytes(tensor_from_proto(i2)), std::string("\x00\x01\x02\x03\x03", 5));

  TensorProto f4 = make_tensor("f", kOnnxFloat4E2M1, {2});
  f4.set_raw_data("\x9f", 1);
  Tensor ft = tensor_from_proto(f4);
  EXPECT_EQ(ft.dtype(), DataType::float4_e2m1fn());
  EXPECT_EQ(tensor_bytes(ft), std::string("\x0f\x09", 2));

  TensorProto bad = make_tensor("w4", kOnnxInt4, {2, 3});
  bad.set_raw_data("\x01\x02", 2);
  std::string msg = testing::error_of([&] { tensor_from_proto(bad); });
  EXPECT_NE(msg.find("tensor 'w4'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("raw_data holds 2 bytes; expected 3 (6 elements packed 2 per byte)"), std::string::npos) << msg;
}

TEST(TensorProto, UndefinedAndUnknownDtypesAreValueErrors) {
  for (int32_t code : {0, 99, -1}) {
    TensorProto proto = make_tensor("u", code, {1});
    ErrorKind kind{};
    std::string msg = testing::error_of([&] { tensor_from_proto(proto); }, &kind);
    EXPECT_EQ(kind, ErrorKind::kValue) << code;
    EXPECT_NE(msg.find("tensor 'u'"), std::string::npos) << msg;
  }
}

TEST(TensorProto, TypedFieldOfAnotherDtypeIsRefused) {
  TensorProto proto = make_tensor("i", TensorProto::INT64, {2});
  proto.add_float_data(1.0f);
  proto.add_float_data(2.0f);
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(msg.find("has float_data; expected its values in int64_data or raw_data"), std::string::npos) << msg;
}

TEST(TensorProto, DataInTwoPlacesIsRefused) {
  TensorProto proto = make_tensor("twice", TensorProto::INT32, {1});
  proto.add_int32_data(7);
  proto.set_raw_data(std::string(4, '\7'));
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(msg.find("more than one place"), std::string::npos) << msg;
}

TEST(TensorProto, Int32DataOutOfTheDtypesRangeIsRefused) {
  TensorProto proto = make_tensor("q8", TensorProto::INT8, {2});
  proto.add_int32_data(5);
  proto.add_int32_data(300);
  std::string msg = testing::error_of([&] { tensor_from_proto(proto); });
  EXPECT_NE(msg.find("value 300 at index 1 is out of range [-128, 127]"), std::string::npos) << msg;

  TensorProto u = make_tensor("u8", TensorProto::UINT8, {1});
  u.add_int32_data(-1);
  msg = testing::error_of([&] { tensor_from_proto(u); });
  EXPECT_NE(msg.find("value -1 at index 0 is out of range [0, 255]"), std::string::npos) << msg;

  TensorProto u32 = make_tensor("u32", TensorProto::UINT32, {1});
  u32.add_uint64_data(uint64_t{1} << 32);
  msg = testing::error_of([&] { tensor_from_proto(u32); });
  EXPECT_NE(msg.find("out of range [0, 4294967295]"), std::string::npos) << msg;
}

TEST(TensorProto, Float16BitPatternsStoredAsInt16AreAccepted) {
  TensorProto proto = make_tensor("h", TensorProto::FLOAT16, {2});
  proto.add_int32_data(-16384);  // 0xC000 = -2.0 as int16
  proto.add_int32_data(0x3C00);  // 1.0
  Tensor t = tensor_from_proto(proto);
  const auto* p = static_cast<const uint16_t*>(t.data());
  EXPECT_EQ(p[0], 0xC000);
  EXPECT_EQ(p[1], 0x3C00);
}

TEST(TensorProto, BoolsBecomeZeroOrOne) {
  TensorProto raw = make_tensor("mask", TensorProto::BOOL, {3});
  raw.set_raw_data(std::string("\x00\x02\xff", 3));
  Tensor t = tensor_from_proto(raw);
  EXPECT_EQ(tensor_bytes(t), std::string("\x00\x01\x01", 3));
  TensorProto typed = make_tensor("mask", TensorProto::BOOL, {2});
  typed.add_int32_data(7);
  typed.add_int32_data(0);
  EXPECT_EQ(tensor_bytes(tensor_from_proto(typed)), std::string("\x01\x00", 2));
}

TEST(TensorProto, SegmentedTensorsAreNotImplemented) {
  TensorProto proto = make_tensor("seg", TensorProto::FLOAT, {1});
  proto.add_float_data(1.0f);
  proto.mutable_segment()->set_begin(0);
  ErrorKind kind{};
  testing::error_of([&] { tensor_from_proto(proto); }, &kind);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
}

}  // namespace
}  // namespace anvil::frontend::onnx
