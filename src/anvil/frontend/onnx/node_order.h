// The order the importer converts a graph's nodes in. ONNX requires nodes to be topologically
// sorted, but files written by hand or by graph surgery tools are not always; they import as
// long as the graph is acyclic. A node depends on the producers of its inputs and of the outer
// values its subgraphs (If/Loop bodies) read.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "anvil/frontend/onnx/proto.h"

namespace anvil::frontend::onnx {

// Node indices in conversion order: the file's order when it is already topological, else a
// topological order that keeps the file's order where it can. `available` holds the names
// defined before any node runs (graph inputs and initializers). ValueError "onnx: ..." for:
//   a value produced twice (by two nodes, or by a node and an input/initializer);
//   a node input that is no graph input, initializer or node output;
//   a cycle, listing its nodes ("node 'a' (Add) -> node 'b' (Mul) -> node 'a' (Add)").
std::vector<int> node_order(const GraphProto& graph, const std::unordered_set<std::string>& available);

}  // namespace anvil::frontend::onnx
