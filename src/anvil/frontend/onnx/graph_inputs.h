// The values a graph starts with: its initializers (graph constants) and its inputs (function
// parameters with symbolic dims, pinned by ImportOptions::input_shapes). See importer.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "anvil/frontend/onnx/import_state.h"

namespace anvil::frontend::onnx {

// The dtypes the importer accepts for inputs, initializers and constants.
inline constexpr const char* kSupportedDtypes =
    "float32, float16, float64, int64, int32, int16, int8, uint64, uint32, uint16, uint8, bool, bfloat16, "
    "float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn, int4, uint4, int2, "
    "uint2";
bool is_supported_dtype(DataType dtype);
// NotImplementedError "onnx: <what> has dtype int16; supported: float32, ..." unless supported.
void check_supported_dtype(DataType dtype, const std::string& what);
// The same for an ONNX element type code ("has dtype bfloat16"); ValueError for UNDEFINED or a
// code no ONNX version defines.
DataType check_supported_code(int32_t code, const std::string& what);

// "[batch, 3, ?]" for a declared tensor shape; "unknown rank" when it has none.
std::string declared_shape_text(const ValueInfoProto& info);

// Adds every initializer to state.values as a graph Constant (with known values when small and
// integer). NotImplementedError for sparse initializers and unsupported dtypes.
void import_initializers(const GraphProto& graph, ImportState& state);

// Adds a parameter to state.builder for every graph input that is not an initializer and records
// it in state.values; returns their ONNX names in order. Checks input_shapes (importer.h).
// Inputs named in input_values become constants instead (importer.h ImportOptions).
std::vector<std::string> import_graph_inputs(const GraphProto& graph,
                                             const std::map<std::string, std::vector<int64_t>>& input_shapes,
                                             const std::map<std::string, Tensor>& input_values, ImportState& state);

}  // namespace anvil::frontend::onnx
