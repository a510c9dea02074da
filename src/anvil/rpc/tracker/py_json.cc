// Python-compatible JSON text (see py_json.h).
#include "anvil/rpc/tracker/py_json.h"

#include <cmath>
#include <cstdint>

#include "anvil/base/python_repr.h"

namespace anvil::rpc::tracker {
namespace {

void append_hex4(std::string& out, uint32_t unit) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(unit >> shift) & 0xFu];
}

// Decodes one UTF-8 sequence at text[i]; nlohmann has validated strings, but stay defensive:
// a stray byte is taken as the code point of its value.
uint32_t next_code_point(std::string_view text, std::size_t& i) {
  auto byte = static_cast<unsigned char>(text[i]);
  int extra = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : byte >= 0xC0 ? 1 : 0;
  uint32_t cp = extra == 3 ? (byte & 0x07u) : extra == 2 ? (byte & 0x0Fu) : extra == 1 ? (byte & 0x1Fu) : byte;
  ++i;
  for (int k = 0; k < extra && i < text.size(); ++k, ++i) {
    cp = (cp << 6) | (static_cast<unsigned char>(text[i]) & 0x3Fu);
  }
  return cp;
}

void append_string(std::string& out, std::string_view text) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    uint32_t cp = next_code_point(text, i);
    switch (cp) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (cp >= 0x20 && cp <= 0x7E) {
      out += static_cast<char>(cp);
    } else if (cp < 0x10000) {
      append_hex4(out, cp);
    } else {  // a surrogate pair, as Python writes astral code points
      uint32_t v = cp - 0x10000;
      append_hex4(out, 0xD800 + (v >> 10));
      append_hex4(out, 0xDC00 + (v & 0x3FF));
    }
  }
  out += '"';
}

void append_value(std::string& out, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: out += "null"; return;
    case Json::value_t::boolean: out += value.get<bool>() ? "true" : "false"; return;
    case Json::value_t::number_integer: out += std::to_string(value.get<int64_t>()); return;
    case Json::value_t::number_unsigned: out += std::to_string(value.get<uint64_t>()); return;
    case Json::value_t::number_float: out += py_float_repr(value.get<double>(), true); return;
    case Json::value_t::string: append_string(out, value.get_ref<const std::string&>()); return;
    case Json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ", ";
        first = false;
        append_value(out, item);
      }
      out += ']';
      return;
    }
    case Json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_string(out, key);
        out += ": ";
        append_value(out, item);
      }
      out += '}';
      return;
    }
    case Json::value_t::binary:
    case Json::value_t::discarded: out += "null"; return;
  }
}

}  // namespace

std::string py_float_repr(double value, bool as_json) {
  if (as_json && std::isnan(value)) return "NaN";
  if (as_json && std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
  return python_float_repr(value);
}

std::string py_dumps(const Json& value) {
  std::string out;
  append_value(out, value);
  return out;
}

std::string py_str(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "None";
    case Json::value_t::boolean: return value.get<bool>() ? "True" : "False";
    case Json::value_t::number_float: return py_float_repr(value.get<double>(), false);
    case Json::value_t::string: return value.get<std::string>();
    default: return py_dumps(value);
  }
}

std::size_t utf8_length(std::string_view text) {
  std::size_t count = 0;
  for (char c : text) {
    if ((static_cast<unsigned char>(c) & 0xC0u) != 0x80u) ++count;
  }
  return count;
}

int json_nesting_depth(std::string_view text) {
  int depth = 0;
  int max_depth = 0;
  bool in_string = false;
  bool escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) max_depth = depth;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max_depth;
}

}  // namespace anvil::rpc::tracker
