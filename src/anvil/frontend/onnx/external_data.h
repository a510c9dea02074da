// External data of ONNX tensors (TensorProto.data_location == EXTERNAL): the bytes live in a file
// next to the model, named by the external_data entries "location" (a path relative to the model's
// directory), "offset" and "length" (decimal byte counts; "checksum" is ignored). Models over
// protobuf's 2 GiB limit keep their weights this way.
//
// A location must stay inside the model's directory: absolute paths and ".." components are
// refused (a model file must not make Anvil read /etc/passwd). Symbolic links inside the directory
// are followed: model caches (Hugging Face's) link weight files to a blob store elsewhere.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "anvil/frontend/onnx/proto.h"

namespace anvil::frontend::onnx {

struct ExternalDataRef {
  std::filesystem::path path;  // the model's directory / location
  uint64_t offset = 0;
  uint64_t length = 0;  // without a "length" entry: the rest of the file after offset
};

// True when the tensor says its data is external (data_location == EXTERNAL).
bool has_external_data(const TensorProto& tensor);

// Checks the entries and the file without reading it. Throws, naming the tensor:
//   ValueError  no "location", an empty/absolute/".."-escaping location, a non-decimal or
//               duplicate entry, offset/length beyond the file's size, or an empty base_dir
//               (a model parsed from bytes has no directory to resolve against);
//   IOError     the file is missing, not a regular file, or its size cannot be read.
ExternalDataRef resolve_external_data(const TensorProto& tensor, const std::filesystem::path& base_dir);

// Reads ref.length bytes at ref.offset into dst (which holds at least ref.length bytes).
// IOError naming the tensor and the file when the read fails or comes up short.
void read_external_data(const ExternalDataRef& ref, std::string_view tensor_name, void* dst);

}  // namespace anvil::frontend::onnx
