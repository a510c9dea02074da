// ONNX TensorProto (an initializer, or the value of a Constant node) -> anvil::Tensor: a compact
// CPU tensor holding a copy of the data. The data comes from exactly one place:
//   external data   data_location == EXTERNAL (external_data.h), little-endian bytes;
//   raw_data        little-endian bytes, numel * element size of them;
//   a typed field   float_data (FLOAT), double_data (DOUBLE), int64_data (INT64),
//                   uint64_data (UINT32, UINT64), int32_data (INT32, INT16, INT8, UINT16, UINT8,
//                   BOOL, and FLOAT16 as its uint16 bit pattern), one value per element.
// dims empty = a 0-d tensor of one element. Supported dtypes: data_types.h's anvil_dtype.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/frontend/onnx/proto.h"
#include "anvil/runtime/tensor.h"

namespace anvil::frontend::onnx {

// "tensor 'w'", or "unnamed tensor" — how messages name a TensorProto.
std::string tensor_label(const TensorProto& tensor);

// The dims as a shape. ValueError naming the tensor for a negative dim or an element count that
// overflows int64.
std::vector<int64_t> tensor_shape(const TensorProto& tensor);

// Converts a TensorProto. External data resolves against base_dir (LoadedModel::base_dir).
// Throws, naming the tensor:
//   NotImplementedError  a dtype Anvil does not support (STRING, COMPLEX*, BFLOAT16, FLOAT8*, ...,
//                        named as ONNX names it), or a segmented tensor;
//   ValueError           UNDEFINED/unknown dtype, bad dims, data length != numel * element size
//                        (expected and actual given), a typed field of another dtype, data in two
//                        places, values out of the dtype's range (int32_data for INT8 holding 300);
//   IOError / ValueError from external data (external_data.h).
Tensor tensor_from_proto(const TensorProto& tensor, const std::filesystem::path& base_dir = {});

}  // namespace anvil::frontend::onnx
