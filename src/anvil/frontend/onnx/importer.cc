// The importer's main loop (importer.h): opset check, initializers and inputs, the nodes in
// order through their converters, the outputs, and the module attributes.
#include "anvil/frontend/onnx/importer.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/control_flow.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/graph_inputs.h"
#include "anvil/frontend/onnx/graph_walk.h"
#include "anvil/frontend/onnx/import_state.h"
#include "anvil/frontend/onnx/node_order.h"

namespace anvil::frontend::onnx {
namespace {

// Models older than kMinOpset import when every operator's definition at the model's opset is
// the one at opset 9 (so the converters, written for 9 and up, read it right): this table gives,
// for the operators whose opset-9 definition is older than 9, the opset it dates from
// (onnx.defs.get_schema(op, 9).since_version). The onnx node tests of And, Or, Xor (opset 7) and
// Not (opset 1) are such models.
constexpr int64_t kOldestOpset = 1;
const std::unordered_map<std::string, int>& opset9_definition_since() {
  static const std::unordered_map<std::string, int> since = {
      {"Abs", 6}, {"Add", 7}, {"And", 7}, {"ArgMax", 1}, {"ArgMin", 1}, {"AveragePool", 7}, {"Ceil", 6}, {"Clip", 6},
      {"Concat", 4}, {"Conv", 1}, {"ConvTranspose", 1}, {"Cos", 7}, {"DepthToSpace", 1}, {"Div", 7}, {"Dropout", 7},
      {"Elu", 6}, {"Equal", 7}, {"Exp", 6}, {"Expand", 8}, {"Floor", 6}, {"GRU", 7}, {"Gather", 1},
      {"GlobalAveragePool", 1}, {"GlobalMaxPool", 1}, {"HardSigmoid", 6}, {"Identity", 1}, {"If", 1},
      {"InstanceNormalization", 6}, {"LRN", 1}, {"LSTM", 7}, {"LeakyRelu", 6}, {"Log", 6}, {"LogSoftmax", 1},
      {"Loop", 1}, {"Max", 8}, {"MaxPool", 8}, {"Mean", 8}, {"Min", 8}, {"Mul", 7}, {"Neg", 6}, {"Not", 1}, {"Or", 7},
      {"Pad", 2}, {"Pow", 7}, {"RNN", 7}, {"Reciprocal", 6}, {"ReduceL1", 1}, {"ReduceL2", 1}, {"ReduceLogSumExp", 1},
      {"ReduceMax", 1}, {"ReduceMean", 1}, {"ReduceMin", 1}, {"ReduceProd", 1}, {"ReduceSum", 1},
      {"ReduceSumSquare", 1}, {"Relu", 6}, {"Reshape", 5}, {"Selu", 6}, {"Shape", 1}, {"Sigmoid", 6}, {"Sin", 7},
      {"Size", 1}, {"Slice", 1}, {"Softmax", 1}, {"Softplus", 1}, {"Softsign", 1}, {"SpaceToDepth", 1}, {"Split", 2},
      {"Sqrt", 6}, {"Squeeze", 1}, {"Sub", 7}, {"Sum", 8}, {"Tanh", 6}, {"Tile", 6}, {"TopK", 1}, {"Transpose", 1},
      {"Unsqueeze", 1}, {"Xor", 7}};
  return since;
}

// The ai.onnx opset; 0 when the model imports none (training or ML-only models: their first
// node names its domain as unsupported).
int checked_opset(const ModelProto& model) {
  std::optional<int64_t> version = opset_version(model, "");
  if (!version) return 0;
  int64_t opset = *version;
  if (opset < kOldestOpset || opset > kMaxOpset) {
    not_implemented_error("onnx: the model imports ai.onnx opset ", opset, "; Anvil imports opsets ", kMinOpset, " to ",
                          kMaxOpset, opset < kMinOpset ? " (convert it with onnx.version_converter)" : "");
  }
  return static_cast<int>(opset);
}

}  // namespace

void convert_node(ImportState& state, const NodeProto& node, int index) {
  NodeContext ctx(state, node, index);
  if (!is_default_domain(node.domain())) {
    ctx.unsupported(str_cat("operators of domain '", node.domain(), "' are not supported (only ai.onnx)"));
  }
  if (state.opset > 0 && state.opset < kMinOpset) {
    auto it = opset9_definition_since().find(node.op_type());
    int since = it == opset9_definition_since().end() ? static_cast<int>(kMinOpset) : it->second;
    if (since > state.opset) {
      ctx.unsupported(str_cat("in an opset ", state.opset, " model only operators whose definition is opset ",
                              kMinOpset, "'s import; ", node.op_type(), "'s is from opset ", since,
                              " (convert the model with onnx.version_converter)"));
    }
  }
  if (is_control_flow(node.op_type())) return convert_control_flow(state, node, index);
  const Converter* converter = find_converter(node.op_type());
  if (converter == nullptr) ctx.unsupported(str_cat("no converter for op type '", node.op_type(), "'"));
  ctx.convert(*converter);
}

graph::Expr output_expr(ImportState& state, const ValueInfoProto& out) {
  if (out.name().empty()) value_error("onnx: a graph output has no name");
  auto it = state.values.find(out.name());
  if (it == state.values.end()) {
    value_error("onnx: graph output '", out.name(), "' is not produced by any node, input or initializer");
  }
  ImportedValue& v = it->second;
  if (v.missing) not_implemented_error("onnx: graph output '", out.name(), "': ", *v.missing);
  try {
    return materialize(state, v, sanitize_name(out.name()));
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat("onnx: graph output '", out.name(), "': ", e.what()));
  }
}

namespace {

graph::IRModule import_model(const ModelProto& proto, const std::filesystem::path& base_dir,
                             const ImportOptions& options) {
  ImportState state;
  std::map<std::string, graph::Function> functions;
  state.functions = &functions;
  state.base_dir = base_dir;
  state.opset = checked_opset(proto);
  state.model = &proto;
  const GraphProto& graph = proto.graph();

  std::vector<std::string> input_names = import_graph_inputs(graph, options.input_shapes, options.input_values, state);
  import_initializers(graph, state);

  std::unordered_set<std::string> available;
  for (const auto& [name, v] : state.values) available.insert(name);
  for (int index : node_order(graph, available)) convert_node(state, graph.node(index), index);

  if (graph.output_size() == 0) value_error("onnx: the graph has no outputs");
  std::vector<graph::Expr> results;
  std::vector<std::string> output_names;
  for (const ValueInfoProto& out : graph.output()) {
    results.push_back(output_expr(state, out));
    output_names.push_back(out.name());
  }
  graph::Expr result = results.size() == 1 ? results[0] : graph::Tuple::make(results);

  graph::IRModule mod;
  mod.functions = std::move(functions);
  mod.functions.emplace("main", state.builder.finish(result));
  mod.attrs["input_names"] = graph::AttrValue::strings(std::move(input_names));
  mod.attrs["output_names"] = graph::AttrValue::strings(std::move(output_names));
  mod.attrs["opset"] = graph::AttrValue(static_cast<int64_t>(state.opset));
  return mod;
}

}  // namespace

graph::IRModule from_onnx(const ModelProto& model, const ImportOptions& options) {
  check_model(model, "model", options.base_dir);
  return import_model(model, options.base_dir, options);
}

graph::IRModule from_onnx(const LoadedModel& model, const ImportOptions& options) {
  return import_model(model.proto, options.base_dir.empty() ? model.base_dir : options.base_dir, options);
}

graph::IRModule from_onnx_file(const std::filesystem::path& path, const ImportOptions& options) {
  return from_onnx(load_model(path), options);
}

graph::IRModule from_onnx_bytes(std::string_view bytes, const ImportOptions& options) {
  return from_onnx(load_model_from_bytes(bytes, "<bytes>", options.base_dir), options);
}

}  // namespace anvil::frontend::onnx
