// What `anvil inspect model.onnx` prints about an ONNX file: header fields, opsets, the graph's
// inputs (those that are not initializers) and outputs with dtype and dims, operator counts and
// the initializers' total size. Reads only the protobuf: external data is counted, never read.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "anvil/frontend/onnx/model_loader.h"

namespace anvil::frontend::onnx {

struct ValueSummary {
  std::string name;
  std::string dtype;              // "float32", "bfloat16", "sequence", "?" (no type)
  bool has_shape = false;         // false: the rank is unknown
  std::vector<std::string> dims;  // "1", "batch" (dim_param), "?" (neither)
};

struct ModelSummary {
  std::string source;
  int64_t ir_version = 0;
  std::string producer;  // "pytorch 2.5.0" (name and version)
  std::string graph_name;
  std::vector<std::pair<std::string, int64_t>> opsets;  // ("ai.onnx", 17), ... in file order
  std::vector<ValueSummary> inputs;                     // graph inputs minus initializers
  std::vector<ValueSummary> outputs;
  // op type ("com.microsoft.Gelu" outside ai.onnx) -> count, sorted by op type; subgraphs included.
  std::vector<std::pair<std::string, int64_t>> op_counts;
  int64_t node_count = 0;                  // all graphs
  int64_t initializer_count = 0;           // main graph (dense + sparse)
  uint64_t initializer_bytes = 0;          // numel x element size, external ones too
  int64_t external_initializer_count = 0;
};

ModelSummary summarize_model(const ModelProto& model, std::string source = "<model>");
inline ModelSummary summarize_model(const LoadedModel& model) { return summarize_model(model.proto, model.source); }

// "[batch, 3, 224, 224]", "[]" for a 0-d value, "unknown rank".
std::string format_dims(const ValueSummary& value);

// An aligned, readable table of everything in the summary:
//   model        resnet.onnx
//   ir_version   8
//   ...
//   inputs       name   dtype    shape
//                x      float32  [N, 3, 224, 224]
std::string format_summary(const ModelSummary& summary);

}  // namespace anvil::frontend::onnx
