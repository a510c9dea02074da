// DataType: a DLPack DLDataType with parsing, printing and size queries.
// Names follow numpy, ml_dtypes and TVM: "float32", "bfloat16", "int8", "uint64", "bool", "float32x4",
// "float8_e4m3fn", "float4_e2m1fn", "int4".
//
// Low-precision types (ONNX 1.15+; codes from DLPack 1.1, which Debian's header predates):
//  - bfloat16 (kDLBfloat) and the float8 / float4 formats each have their own code, bits 8 / 4.
//    "fn" = finite (no inf), "uz" = unsigned zero (no -0; the only NaN is 0x80); float8_e8m0fnu
//    is a power of two alone (the MX formats' scale): 8 exponent bits, no sign, no zero, 0xFF NaN.
//  - int4 / uint4 / int2 / uint2 are kInt / kUInt with bits 4 / 2.
//  Storage: every sub-byte type (int4, uint4, int2, uint2, float4_e2m1fn) takes one whole byte per
//  element, the value in the low bits and the high bits zero (as ml_dtypes stores them); ONNX's
//  TensorProto packs two per byte and the ONNX loader unpacks them. bytes() counts this storage.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil {

// DLPack 0.8 added kDLBool = 6; Debian's header may predate it.
inline constexpr uint8_t kDLBoolCode = 6;

class DataType {
 public:
  enum Code : uint8_t {
    kInt = kDLInt,
    kUInt = kDLUInt,
    kFloat = kDLFloat,
    kBFloat = kDLBfloat,
    kBool = kDLBoolCode,
    kOpaqueHandle = 3,
    kFloat8E4M3FN = 10,    // DLPack kDLFloat8_e4m3fn: max 448, NaN = S.1111.111, no inf
    kFloat8E4M3FNUZ = 11,  // kDLFloat8_e4m3fnuz: bias 8, max 240, NaN = 0x80, no inf, no -0
    kFloat8E5M2 = 12,      // kDLFloat8_e5m2: IEEE-like (bias 15, inf and NaNs), max 57344
    kFloat8E5M2FNUZ = 13,  // kDLFloat8_e5m2fnuz: bias 16, max 57344, NaN = 0x80, no inf, no -0
    kFloat8E8M0FNU = 14,   // kDLFloat8_e8m0fnu: 2^(code - 127), codes 0..254; 0xFF = NaN
    kFloat4E2M1FN = 17,    // kDLFloat4_e2m1fn: values 0, 0.5, 1, 1.5, 2, 3, 4, 6; no inf, no NaN
  };

  constexpr DataType() : dl_{kDLFloat, 32, 1} {}
  constexpr DataType(DLDataType dl) : dl_(dl) {}
  constexpr DataType(uint8_t code, uint8_t bits, uint16_t lanes = 1) : dl_{code, bits, lanes} {}

  static constexpr DataType float16() { return {kFloat, 16}; }
  static constexpr DataType bfloat16() { return {kBFloat, 16}; }
  static constexpr DataType float32() { return {kFloat, 32}; }
  static constexpr DataType float64() { return {kFloat, 64}; }
  static constexpr DataType int8() { return {kInt, 8}; }
  static constexpr DataType int16() { return {kInt, 16}; }
  static constexpr DataType int32() { return {kInt, 32}; }
  static constexpr DataType int64() { return {kInt, 64}; }
  static constexpr DataType uint8() { return {kUInt, 8}; }
  static constexpr DataType uint16() { return {kUInt, 16}; }
  static constexpr DataType uint32() { return {kUInt, 32}; }
  static constexpr DataType uint64() { return {kUInt, 64}; }
  static constexpr DataType boolean() { return {kBool, 8}; }
  static constexpr DataType float8_e4m3fn() { return {kFloat8E4M3FN, 8}; }
  static constexpr DataType float8_e4m3fnuz() { return {kFloat8E4M3FNUZ, 8}; }
  static constexpr DataType float8_e5m2() { return {kFloat8E5M2, 8}; }
  static constexpr DataType float8_e5m2fnuz() { return {kFloat8E5M2FNUZ, 8}; }
  static constexpr DataType float8_e8m0fnu() { return {kFloat8E8M0FNU, 8}; }
  static constexpr DataType float4_e2m1fn() { return {kFloat4E2M1FN, 4}; }
  static constexpr DataType int4() { return {kInt, 4}; }
  static constexpr DataType uint4() { return {kUInt, 4}; }
  static constexpr DataType int2() { return {kInt, 2}; }
  static constexpr DataType uint2() { return {kUInt, 2}; }

  // Throws ValueError naming the text and listing accepted forms.
  static DataType parse(std::string_view text);

  uint8_t code() const { return dl_.code; }
  int bits() const { return dl_.bits; }
  int lanes() const { return dl_.lanes; }
  DLDataType dl() const { return dl_; }
  // Bytes of one element (all lanes) in memory; a sub-byte element takes a whole byte.
  size_t bytes() const { return static_cast<size_t>(storage_bits()) * dl_.lanes / 8; }
  // Bits one lane occupies in memory: bits() rounded up to 8, 16, 32 or 64.
  int storage_bits() const { return dl_.bits <= 8 ? 8 : dl_.bits <= 16 ? 16 : dl_.bits <= 32 ? 32 : 64; }
  bool is_float() const { return dl_.code == kFloat || is_low_precision_float(); }
  // bfloat16 and the float8 / float4 formats: floats that the code generator keeps as raw bits
  // (an integer of storage_bits()) and converts through float32.
  bool is_low_precision_float() const {
    return dl_.code == kBFloat || dl_.code == kFloat8E4M3FN || dl_.code == kFloat8E4M3FNUZ ||
           dl_.code == kFloat8E5M2 || dl_.code == kFloat8E5M2FNUZ || dl_.code == kFloat8E8M0FNU ||
           dl_.code == kFloat4E2M1FN;
  }
  // int4, uint4, int2, uint2.
  bool is_sub_byte_int() const { return (dl_.code == kInt || dl_.code == kUInt) && dl_.bits < 8; }
  bool is_int() const { return dl_.code == kInt; }
  bool is_uint() const { return dl_.code == kUInt; }
  bool is_bool() const { return dl_.code == kBool; }
  // True for the element types a Tensor may hold (see Tensor); lanes must be 1.
  bool is_tensor_element() const;

  std::string to_string() const;

  bool operator==(const DataType& o) const {
    return dl_.code == o.dl_.code && dl_.bits == o.dl_.bits && dl_.lanes == o.dl_.lanes;
  }

 private:
  DLDataType dl_;
};

std::ostream& operator<<(std::ostream& os, const DataType& t);

}  // namespace anvil
