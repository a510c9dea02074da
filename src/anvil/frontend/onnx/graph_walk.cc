#include "anvil/frontend/onnx/graph_walk.h"

#include "anvil/base/error.h"

namespace anvil::frontend::onnx {
namespace {

void walk_graphs(const GraphProto& graph, const std::string& where,
                 const std::function<void(const GraphProto&, const std::string&)>& fn) {
  fn(graph, where);
  for (int i = 0; i < graph.node_size(); ++i) {
    const NodeProto& node = graph.node(i);
    for (const AttributeProto& attr : node.attribute()) {
      std::string at = str_cat(where, " ", describe_node(node, i), " attribute '", attr.name(), "'");
      if (attr.has_g()) walk_graphs(attr.g(), at, fn);
      for (int k = 0; k < attr.graphs_size(); ++k) walk_graphs(attr.graphs(k), str_cat(at, "[", k, "]"), fn);
    }
  }
}

void sparse_tensors(const SparseTensorProto& sparse, const std::string& where,
                    const std::function<void(const TensorProto&, const std::string&)>& fn) {
  if (sparse.has_values()) fn(sparse.values(), where + " values");
  if (sparse.has_indices()) fn(sparse.indices(), where + " indices");
}

}  // namespace

std::string describe_node(const NodeProto& node, int index) {
  std::string op =
      node.domain().empty() || node.domain() == "ai.onnx" ? node.op_type() : node.domain() + "." + node.op_type();
  if (node.name().empty()) return str_cat("node ", index, " (", op, ")");
  return str_cat("node '", node.name(), "' (", op, ")");
}

void for_each_graph(const GraphProto& graph, const std::function<void(const GraphProto&, const std::string&)>& fn) {
  walk_graphs(graph, str_cat("graph '", graph.name(), "'"), fn);
}

void for_each_tensor(const GraphProto& graph, const std::function<void(const TensorProto&, const std::string&)>& fn) {
  for_each_graph(graph, [&](const GraphProto& g, const std::string& where) {
    for (int i = 0; i < g.initializer_size(); ++i) {
      fn(g.initializer(i), str_cat(where, " initializer '", g.initializer(i).name(), "'"));
    }
    for (int i = 0; i < g.sparse_initializer_size(); ++i) {
      sparse_tensors(g.sparse_initializer(i), str_cat(where, " sparse initializer ", i), fn);
    }
    for (int i = 0; i < g.node_size(); ++i) {
      const NodeProto& node = g.node(i);
      for (const AttributeProto& attr : node.attribute()) {
        std::string at = str_cat(where, " ", describe_node(node, i), " attribute '", attr.name(), "'");
        if (attr.has_t()) fn(attr.t(), at);
        for (int k = 0; k < attr.tensors_size(); ++k) fn(attr.tensors(k), str_cat(at, "[", k, "]"));
        if (attr.has_sparse_tensor()) sparse_tensors(attr.sparse_tensor(), at, fn);
        for (int k = 0; k < attr.sparse_tensors_size(); ++k) {
          sparse_tensors(attr.sparse_tensors(k), str_cat(at, "[", k, "]"), fn);
        }
      }
    }
  });
}

}  // namespace anvil::frontend::onnx
