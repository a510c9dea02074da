// The importer's main loop (importer.h): opset check, initializers and inputs, the nodes in
// order through their converters, the outputs, and the module attributes.
#include "anvil/frontend/onnx/importer.h"

#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/graph_inputs.h"
#include "anvil/frontend/onnx/graph_walk.h"
#include "anvil/frontend/onnx/import_state.h"
#include "anvil/frontend/onnx/node_order.h"

namespace anvil::frontend::onnx {
namespace {

// The ai.onnx opset; 0 when the model imports none (training or ML-only models: their first
// node names its domain as unsupported).
int checked_opset(const ModelProto& model) {
  std::optional<int64_t> version = opset_version(model, "");
  if (!version) return 0;
  int64_t opset = *version;
  if (opset < kMinOpset || opset > kMaxOpset) {
    not_implemented_error("onnx: the model imports ai.onnx opset ", opset, "; Anvil imports opsets ", kMinOpset, " to ",
                          kMaxOpset, opset < kMinOpset ? " (convert it with onnx.version_converter)" : "");
  }
  return static_cast<int>(opset);
}

void convert_node(ImportState& state, const NodeProto& node, int index) {
  NodeContext ctx(state, node, index);
  if (!is_default_domain(node.domain())) {
    ctx.unsupported(str_cat("operators of domain '", node.domain(), "' are not supported (only ai.onnx)"));
  }
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

graph::IRModule import_model(const ModelProto& proto, const std::filesystem::path& base_dir,
                             const ImportOptions& options) {
  ImportState state;
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
