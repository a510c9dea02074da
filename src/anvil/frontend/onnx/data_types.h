// ONNX element types (TensorProto.DataType codes) and what Anvil makes of them: the ONNX name of
// every code up to the newest ONNX (1.23: FLOAT6E3M2 = 28), its storage size, and the Anvil
// DataType of the ones Anvil computes with. Codes are plain ints: TensorProto.data_type and
// TypeProto.Tensor.elem_type are int32 fields, so codes newer than the compiled onnx.proto arrive
// intact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "anvil/runtime/data_type.h"

namespace anvil::frontend::onnx {

// ONNX's own name: "FLOAT", "INT64", "BFLOAT16", "FLOAT8E4M3FN"; "UNDEFINED" for 0 and
// "<unknown data type 99>" for a code no ONNX version defines.
std::string onnx_dtype_name(int32_t code);

// True for a code some ONNX version defines (1..28).
bool is_known_onnx_dtype(int32_t code);

// Bits of one element as ONNX stores it (FLOAT: 32, INT4: 4, FLOAT6E2M3: 6); 0 for STRING,
// UNDEFINED and unknown codes. COMPLEX64 is 64 (both halves).
int onnx_dtype_bits(int32_t code);

// The codes newer than the compiled onnx.proto (which stops at BFLOAT16 = 16).
enum OnnxNewDtype : int32_t {
  kOnnxFloat8E4M3FN = 17,
  kOnnxFloat8E4M3FNUZ = 18,
  kOnnxFloat8E5M2 = 19,
  kOnnxFloat8E5M2FNUZ = 20,
  kOnnxUInt4 = 21,
  kOnnxInt4 = 22,
  kOnnxFloat4E2M1 = 23,
  kOnnxFloat8E8M0 = 24,
};

// The Anvil dtype of a code Anvil computes with (FLOAT, FLOAT16, DOUBLE, BFLOAT16, INT2/4/8/16/32/64,
// UINT2/4/8/16/32/64, BOOL, FLOAT8E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ/E8M0, FLOAT4E2M1); nullopt for the
// others (STRING, COMPLEX*, FLOAT6*).
std::optional<DataType> anvil_dtype(int32_t code);

// The same, or throws: ValueError for UNDEFINED and unknown codes, NotImplementedError for a
// known one Anvil does not support. `what` names the value in the message ("tensor 'w'").
DataType anvil_dtype_or_throw(int32_t code, std::string_view what);

// What summaries print: Anvil's name for supported codes ("float32"), else ONNX's in lower case
// ("bfloat16", "string", "float8e4m3fn").
std::string display_dtype_name(int32_t code);

}  // namespace anvil::frontend::onnx
