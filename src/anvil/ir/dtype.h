// Data types of the IR: anvil::DataType (a DLPack DLDataType) plus the IR's extra notions —
// void (a function returning nothing), handle (an opaque pointer: buffer data), lanes helpers,
// and the range check used by immediates.
#pragma once

#include <cstdint>
#include <string>

#include "anvil/runtime/data_type.h"

namespace anvil::ir {

using anvil::DataType;

// "void": code handle, 0 bits, 0 lanes (never a value's type; PrimFunc return type only).
constexpr DataType void_type() { return DataType(DataType::kOpaqueHandle, 0, 0); }
// An opaque 64-bit pointer (buffer data variables).
constexpr DataType handle_type() { return DataType(DataType::kOpaqueHandle, 64, 1); }
constexpr DataType bool_type(int lanes = 1) { return DataType(DataType::kBool, 8, static_cast<uint16_t>(lanes)); }

inline bool is_void(DataType t) { return t == void_type(); }
inline bool is_handle(DataType t) { return t.code() == DataType::kOpaqueHandle && t.bits() != 0; }
// int, uint or float (any bits, any lanes); bool and handles are not numeric.
inline bool is_numeric(DataType t) { return t.is_int() || t.is_uint() || t.is_float(); }
// int or uint.
inline bool is_integer(DataType t) { return t.is_int() || t.is_uint(); }
inline DataType with_lanes(DataType t, int lanes) {
  return DataType(t.code(), static_cast<uint8_t>(t.bits()), static_cast<uint16_t>(lanes));
}
inline DataType element_of(DataType t) { return with_lanes(t, 1); }

// "void" for void_type(), otherwise DataType::to_string() ("float32x4", "handle", ...).
std::string dtype_name(DataType t);
// Whether an integer value is representable in the (int/uint/bool) element type t.
bool int_fits(DataType t, int64_t value);

}  // namespace anvil::ir
