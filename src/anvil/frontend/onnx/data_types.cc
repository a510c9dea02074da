#include "anvil/frontend/onnx/data_types.h"

#include <array>
#include <cctype>

#include "anvil/base/error.h"

namespace anvil::frontend::onnx {
namespace {

struct DtypeInfo {
  const char* name;
  int bits;
  std::optional<DataType> anvil;
};

// Indexed by the TensorProto.DataType code (onnx.proto of ONNX 1.23).
const std::array<DtypeInfo, 29>& dtype_table() {
  static const std::array<DtypeInfo, 29> table = {{
      {"UNDEFINED", 0, std::nullopt},
      {"FLOAT", 32, DataType::float32()},
      {"UINT8", 8, DataType::uint8()},
      {"INT8", 8, DataType::int8()},
      {"UINT16", 16, DataType::uint16()},
      {"INT16", 16, DataType::int16()},
      {"INT32", 32, DataType::int32()},
      {"INT64", 64, DataType::int64()},
      {"STRING", 0, std::nullopt},
      {"BOOL", 8, DataType::boolean()},
      {"FLOAT16", 16, DataType::float16()},
      {"DOUBLE", 64, DataType::float64()},
      {"UINT32", 32, DataType::uint32()},
      {"UINT64", 64, DataType::uint64()},
      {"COMPLEX64", 64, std::nullopt},
      {"COMPLEX128", 128, std::nullopt},
      {"BFLOAT16", 16, DataType::bfloat16()},
      {"FLOAT8E4M3FN", 8, DataType::float8_e4m3fn()},
      {"FLOAT8E4M3FNUZ", 8, DataType::float8_e4m3fnuz()},
      {"FLOAT8E5M2", 8, DataType::float8_e5m2()},
      {"FLOAT8E5M2FNUZ", 8, DataType::float8_e5m2fnuz()},
      {"UINT4", 4, DataType::uint4()},
      {"INT4", 4, DataType::int4()},
      {"FLOAT4E2M1", 4, DataType::float4_e2m1fn()},
      {"FLOAT8E8M0", 8, DataType::float8_e8m0fnu()},
      {"UINT2", 2, DataType::uint2()},
      {"INT2", 2, DataType::int2()},
      {"FLOAT6E2M3", 6, std::nullopt},
      {"FLOAT6E3M2", 6, std::nullopt},
  }};
  return table;
}

const DtypeInfo* find(int32_t code) {
  const auto& table = dtype_table();
  if (code < 0 || static_cast<size_t>(code) >= table.size()) return nullptr;
  return &table[static_cast<size_t>(code)];
}

}  // namespace

bool is_known_onnx_dtype(int32_t code) { return code > 0 && find(code) != nullptr; }

std::string onnx_dtype_name(int32_t code) {
  if (const DtypeInfo* info = find(code)) return info->name;
  return str_cat("<unknown data type ", code, ">");
}

int onnx_dtype_bits(int32_t code) {
  const DtypeInfo* info = find(code);
  return info ? info->bits : 0;
}

std::optional<DataType> anvil_dtype(int32_t code) {
  const DtypeInfo* info = find(code);
  return info ? info->anvil : std::nullopt;
}

DataType anvil_dtype_or_throw(int32_t code, std::string_view what) {
  if (code == 0) value_error(what, ": data type is UNDEFINED (0); expected an element type such as FLOAT (1)");
  if (!is_known_onnx_dtype(code)) {
    value_error(what, ": data type ", code, " is not an ONNX data type (known: 1..", dtype_table().size() - 1, ")");
  }
  if (auto dt = anvil_dtype(code)) return *dt;
  not_implemented_error(what, ": data type ", onnx_dtype_name(code),
                        " is not supported; supported: FLOAT, FLOAT16, DOUBLE, BFLOAT16, INT8, INT16, INT32, INT64, "
                        "UINT8, UINT16, UINT32, UINT64, BOOL, FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, "
                        "FLOAT8E5M2FNUZ, FLOAT8E8M0, INT4, UINT4, INT2, UINT2, FLOAT4E2M1");
}

std::string display_dtype_name(int32_t code) {
  if (auto dt = anvil_dtype(code)) return dt->to_string();
  if (!is_known_onnx_dtype(code)) return onnx_dtype_name(code);
  std::string name = onnx_dtype_name(code);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace anvil::frontend::onnx
