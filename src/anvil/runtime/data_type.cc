// Parsing and printing of data type names.
#include "anvil/runtime/data_type.h"

#include <charconv>
#include <optional>
#include <ostream>

#include "anvil/base/error.h"

namespace anvil {
namespace {

bool parse_uint(std::string_view text, int* out) {
  if (text.empty()) return false;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size() && *out > 0;
}

[[noreturn]] void bad_dtype(std::string_view text) {
  value_error("cannot parse data type '", text,
              "': expected one of bool, int2/4/8/16/32/64, uint2/4/8/16/32/64, float16/32/64, bfloat16, "
              "float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn, "
              "optionally followed by xLANES (e.g. float32x4)");
}

// The low-precision float formats named by their full name (bits are part of the name).
struct NamedCode {
  const char* name;
  uint8_t code;
  uint8_t bits;
};
constexpr NamedCode kNamedFloats[] = {
    {"float8_e4m3fn", DataType::kFloat8E4M3FN, 8},     {"float8_e4m3fnuz", DataType::kFloat8E4M3FNUZ, 8},
    {"float8_e5m2", DataType::kFloat8E5M2, 8},         {"float8_e5m2fnuz", DataType::kFloat8E5M2FNUZ, 8},
    {"float8_e8m0fnu", DataType::kFloat8E8M0FNU, 8},   {"float4_e2m1fn", DataType::kFloat4E2M1FN, 4},
};

}  // namespace

DataType DataType::parse(std::string_view text) {
  std::string_view base = text;
  int lanes = 1;
  if (size_t x = text.find('x'); x != std::string_view::npos) {
    base = text.substr(0, x);
    if (!parse_uint(text.substr(x + 1), &lanes) || lanes > 65535) bad_dtype(text);
  }
  auto with_bits = [&](std::string_view prefix, uint8_t code) -> std::optional<DataType> {
    if (base.substr(0, prefix.size()) != prefix) return std::nullopt;
    int bits = 0;
    if (!parse_uint(base.substr(prefix.size()), &bits) || bits > 255) return std::nullopt;
    return DataType(code, static_cast<uint8_t>(bits), static_cast<uint16_t>(lanes));
  };
  if (base == "bool") return DataType(kBool, 8, static_cast<uint16_t>(lanes));
  if (base == "handle") return DataType(kOpaqueHandle, 64, static_cast<uint16_t>(lanes));
  for (const NamedCode& n : kNamedFloats)
    if (base == n.name) return DataType(n.code, n.bits, static_cast<uint16_t>(lanes));
  // Order matters: "uint" and "bfloat" before their suffixes "int" and "float".
  if (auto t = with_bits("uint", kUInt)) return *t;
  if (auto t = with_bits("int", kInt)) return *t;
  if (auto t = with_bits("bfloat", kBFloat)) return *t;
  if (auto t = with_bits("float", kFloat)) return *t;
  bad_dtype(text);
}

bool DataType::is_tensor_element() const {
  if (dl_.lanes != 1) return false;
  switch (dl_.code) {
    case kInt:
    case kUInt:
      return dl_.bits == 2 || dl_.bits == 4 || dl_.bits == 8 || dl_.bits == 16 || dl_.bits == 32 || dl_.bits == 64;
    case kFloat:
      return dl_.bits == 16 || dl_.bits == 32 || dl_.bits == 64;
    case kBFloat:
      return dl_.bits == 16;
    case kBool:
      return dl_.bits == 8;
    default:
      for (const NamedCode& n : kNamedFloats)
        if (dl_.code == n.code) return dl_.bits == n.bits;
      return false;
  }
}

std::string DataType::to_string() const {
  for (const NamedCode& n : kNamedFloats) {
    if (dl_.code == n.code && dl_.bits == n.bits)
      return dl_.lanes == 1 ? std::string(n.name) : str_cat(n.name, "x", dl_.lanes);
  }
  std::string name;
  switch (dl_.code) {
    case kInt: name = "int"; break;
    case kUInt: name = "uint"; break;
    case kFloat: name = "float"; break;
    case kBFloat: name = "bfloat"; break;
    case kBool: name = "bool"; break;
    case kOpaqueHandle: name = "handle"; break;
    default: name = str_cat("custom[", int(dl_.code), "]"); break;
  }
  if (dl_.code != kBool && dl_.code != kOpaqueHandle) name += std::to_string(dl_.bits);
  if (dl_.lanes != 1) name += "x" + std::to_string(dl_.lanes);
  return name;
}

std::ostream& operator<<(std::ostream& os, const DataType& t) { return os << t.to_string(); }

}  // namespace anvil
