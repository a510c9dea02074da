// Walks an ONNX graph with its subgraphs (the graph attributes of If, Loop, Scan, ...) and the
// tensors it holds, naming where each one sits so messages can point at it:
//   graph 'main' node 'cond' (If) attribute 'then_branch' node 3 (Constant) attribute 'value'
#pragma once

#include <functional>
#include <string>

#include "anvil/frontend/onnx/proto.h"

namespace anvil::frontend::onnx {

// "node 'relu_1' (Relu)", or "node 3 (Relu)" for an unnamed node (3 = its index in the graph).
std::string describe_node(const NodeProto& node, int index);

// Calls fn on `graph` and then on every subgraph below it, depth first; `where` is "graph 'name'"
// for the root and the path from the root for subgraphs. Protobuf's recursion limit (100) bounds
// the depth of what a parse accepts.
void for_each_graph(const GraphProto& graph,
                    const std::function<void(const GraphProto& graph, const std::string& where)>& fn);

// Calls fn on every TensorProto of the graph and its subgraphs: initializers, sparse initializers'
// values and indices, and node attributes (t, tensors, sparse_tensor(s): Constant's value).
void for_each_tensor(const GraphProto& graph,
                     const std::function<void(const TensorProto& tensor, const std::string& where)>& fn);

}  // namespace anvil::frontend::onnx
