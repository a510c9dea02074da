// DataType: a DLPack DLDataType with parsing, printing and size queries.
// Names follow numpy and TVM: "float32", "bfloat16", "int8", "uint64", "bool", "float32x4".
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

  // Throws ValueError naming the text and listing accepted forms.
  static DataType parse(std::string_view text);

  uint8_t code() const { return dl_.code; }
  int bits() const { return dl_.bits; }
  int lanes() const { return dl_.lanes; }
  DLDataType dl() const { return dl_; }
  // Bytes of one element (all lanes), rounded up to whole bytes.
  size_t bytes() const { return (static_cast<size_t>(dl_.bits) * dl_.lanes + 7) / 8; }
  bool is_float() const { return dl_.code == kFloat || dl_.code == kBFloat; }
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
