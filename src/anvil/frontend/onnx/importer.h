// ONNX -> graph IR: a ModelProto becomes an IRModule whose "main" function takes the model's
// inputs (those that are not initializers) as parameters and returns its outputs (one value, or
// a tuple of them when the model has several).
//
//   ImportOptions options;
//   options.input_shapes["x"] = {1, 3, 224, 224};
//   graph::IRModule mod = from_onnx_file("resnet.onnx", options);
//
// Inputs: the dtype comes from the graph input's type; a dimension is a constant (dim_value), the
// size var named by its dim_param (one name = one Var across all inputs; any string is a name,
// e.g. "batch*2", printed sanitised as batch_2), or a fresh var "<input>_d<i>" when unknown.
// ImportOptions::input_shapes pins dimensions: a pinned dim_param pins that name everywhere.
// Initializers and Constant nodes become graph constants; an initializer that is also listed as
// a graph input (models older than IR version 4 list every weight there) is a constant too.
// Declared output shapes are never read: types are inferred, as real files declare wrong ones.
//
// Nodes convert in file order, or in a topological order when the file is not sorted (ValueError
// for a cycle or an input nobody produces), each through the converter of its op type
// (converters.h). Opsets 9 to kMaxOpset of the default domain are supported; a node of another
// domain, an op type without a converter, an opset out of range or an unsupported dtype
// (float32/16/64, int64/32/8, uint8 and bool are supported) is a NotImplementedError naming the
// node or the tensor. Every conversion error starts with "onnx: " (loading errors name the file).
//
// Module attributes: "input_names" and "output_names" (the ONNX names, in order) and "opset".
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/frontend/onnx/model_loader.h"
#include "anvil/graph/function.h"
#include "anvil/runtime/tensor.h"

namespace anvil::frontend::onnx {

// The ai.onnx opsets the importer accepts: 9 (the opset of the onnx package's `light` models) to
// the newest the installed onnx package defines (onnx 1.23: onnx.defs.onnx_opset_version() = 28).
inline constexpr int64_t kMinOpset = 9;
inline constexpr int64_t kMaxOpset = 28;

struct ImportOptions {
  // Input name -> its full shape (every dimension, >= 0; -1 keeps the model's dimension). ValueError
  // naming the input for a name that is no input of the model, a rank other than the declared one,
  // a constant dimension pinned to another value, or a dim_param pinned to two values.
  std::map<std::string, std::vector<int64_t>> input_shapes;
  // Input name -> a value the input takes at every run: the input becomes a constant (with known
  // values, so shape arguments fed as inputs, e.g. Reshape's shape or ReduceSum's axes, fold) and
  // is no parameter of "main" nor in "input_names". The tensor must be a CPU tensor of the
  // input's declared dtype and rank (declared constant dims equal). ValueError naming the input.
  std::map<std::string, Tensor> input_values;
  // Where external data resolves (from_onnx of a ModelProto; the file overloads use the model's
  // directory when this is empty).
  std::filesystem::path base_dir;
};

// Checks the model (model_loader.h check_model) and converts it.
graph::IRModule from_onnx(const ModelProto& model, const ImportOptions& options = {});
// A loaded (so already checked) model: external data resolves against options.base_dir, else
// model.base_dir.
graph::IRModule from_onnx(const LoadedModel& model, const ImportOptions& options = {});
// Loads (load_model) and converts a file.
graph::IRModule from_onnx_file(const std::filesystem::path& path, const ImportOptions& options = {});
// Parses (load_model_from_bytes, external data against options.base_dir) and converts.
graph::IRModule from_onnx_bytes(std::string_view bytes, const ImportOptions& options = {});

}  // namespace anvil::frontend::onnx
