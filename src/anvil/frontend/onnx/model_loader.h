// Loading ONNX models: read and parse a ModelProto from a file or from bytes, then check what the
// importer relies on, so a malformed file fails here with a message naming the file and the
// problem instead of somewhere inside the conversion.
//
// Checks (check_model): a graph is present; opset_import is non-empty, each version >= 1, no
// domain twice; every node's domain is imported (or is a local function's domain); no node has an
// empty op_type (in subgraphs and local functions too); every external-data reference resolves
// inside the model's directory and within its file (external_data.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "anvil/frontend/onnx/proto.h"

namespace anvil::frontend::onnx {

// protobuf cannot parse a message of 2 GiB or more (its offsets are int); bigger models keep their
// weights as external data.
inline constexpr uint64_t kMaxModelBytes = 0x7fffffff;

struct LoadedModel {
  ModelProto proto;
  std::string source;              // names the model in messages: the path as given, or "<bytes>"
  std::filesystem::path base_dir;  // where external data resolves; empty when there is none
};

// Reads, parses and checks a model file. IOError: the file cannot be opened or read, or is a
// directory. ValueError: empty, larger than kMaxModelBytes, not an ONNX protobuf (truncated,
// corrupt, another format), or a failed check. External data resolves against the file's directory.
LoadedModel load_model(const std::filesystem::path& path);

// The same for a serialized model in memory. External data resolves against base_dir; with an
// empty base_dir a model that has external data fails (ValueError).
LoadedModel load_model_from_bytes(std::string_view bytes, std::string source = "<bytes>",
                                  std::filesystem::path base_dir = {});

// Parses only (ValueError as above, no checks).
ModelProto parse_model(std::string_view bytes, std::string_view source);

// The checks listed at the top; throws ValueError (IOError for unreadable external files) naming
// `source` and the offending item.
void check_model(const ModelProto& model, std::string_view source, const std::filesystem::path& base_dir);

// "" and "ai.onnx" are both the default (ai.onnx) domain.
bool is_default_domain(std::string_view domain);

// The version of `domain` in opset_import (the default domain under either name); nullopt when
// the model does not import it.
std::optional<int64_t> opset_version(const ModelProto& model, std::string_view domain);

// The ai.onnx opset version; ValueError naming `source` when the model does not import it.
int64_t default_opset(const ModelProto& model, std::string_view source = "<model>");

}  // namespace anvil::frontend::onnx
