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
              "': expected one of bool, int8/16/32/64, uint8/16/32/64, float16/32/64, bfloat16, "
              "optionally followed by xLANES (e.g. float32x4)");
}

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
      return dl_.bits == 8 || dl_.bits == 16 || dl_.bits == 32 || dl_.bits == 64;
    case kFloat:
      return dl_.bits == 16 || dl_.bits == 32 || dl_.bits == 64;
    case kBFloat:
      return dl_.bits == 16;
    case kBool:
      return dl_.bits == 8;
    default:
      return false;
  }
}

std::string DataType::to_string() const {
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
