#include "anvil/frontend/onnx/node_order.h"

#include <queue>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/graph_walk.h"

namespace anvil::frontend::onnx {
namespace {

// Every name a subgraph (and the subgraphs below it) reads as a node input.
void subgraph_reads(const GraphProto& g, std::unordered_set<std::string>& out) {
  for (const NodeProto& node : g.node()) {
    for (const std::string& in : node.input())
      if (!in.empty()) out.insert(in);
    for (const AttributeProto& a : node.attribute()) {
      if (a.has_g()) subgraph_reads(a.g(), out);
      for (const GraphProto& sub : a.graphs()) subgraph_reads(sub, out);
    }
  }
}

// One cycle among the nodes Kahn's algorithm could not place (each of them has an unplaced
// predecessor, so walking predecessors from any of them must come back to a node seen before).
std::string describe_cycle(const GraphProto& graph, const std::vector<std::vector<int>>& preds,
                           const std::vector<int>& indegree) {
  int start = 0;
  while (indegree[static_cast<size_t>(start)] == 0) ++start;
  std::vector<int> path;
  std::unordered_map<int, size_t> pos;
  int at = start;
  while (!pos.count(at)) {
    pos[at] = path.size();
    path.push_back(at);
    for (int p : preds[static_cast<size_t>(at)]) {
      if (indegree[static_cast<size_t>(p)] > 0) {
        at = p;
        break;
      }
    }
  }
  // path[pos[at]..] walks predecessors; print it in data-flow order.
  std::string out;
  for (size_t k = path.size(); k > pos[at]; --k) {
    int n = path[k - 1];
    out += describe_node(graph.node(n), n) + " -> ";
  }
  return out + describe_node(graph.node(path.back()), path.back());
}

}  // namespace

std::vector<int> node_order(const GraphProto& graph, const std::unordered_set<std::string>& available) {
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      if (available.count(out)) {
        value_error("onnx: ", describe_node(graph.node(i), i), " produces '", out,
                    "', which is already a graph input or initializer");
      }
      auto [it, inserted] = producer.emplace(out, i);
      if (!inserted) {
        value_error("onnx: value '", out, "' is produced twice: by ", describe_node(graph.node(it->second), it->second),
                    " and by ", describe_node(graph.node(i), i));
      }
    }
  }

  std::vector<std::vector<int>> preds(static_cast<size_t>(n));
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    const NodeProto& node = graph.node(i);
    auto depend = [&](const std::string& name, bool must_exist) {
      if (name.empty() || available.count(name)) return;
      auto it = producer.find(name);
      if (it == producer.end()) {
        if (!must_exist) return;  // a subgraph's own value, or an error its converter reports
        value_error("onnx: ", describe_node(node, i), " reads '", name,
                    "', which is no graph input, initializer or output of a node");
      }
      preds[static_cast<size_t>(i)].push_back(it->second);
      if (it->second >= i) sorted = false;
    };
    for (const std::string& in : node.input()) depend(in, true);
    std::unordered_set<std::string> reads;
    for (const AttributeProto& a : node.attribute()) {
      if (a.has_g()) subgraph_reads(a.g(), reads);
      for (const GraphProto& sub : a.graphs()) subgraph_reads(sub, reads);
    }
    for (const std::string& name : reads) depend(name, false);
  }

  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  if (sorted) {
    for (int i = 0; i < n; ++i) order.push_back(i);
    return order;
  }
  // Kahn's algorithm, always taking the ready node that comes first in the file.
  std::vector<int> indegree(static_cast<size_t>(n), 0);
  std::vector<std::vector<int>> succs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    for (int p : preds[static_cast<size_t>(i)]) {
      succs[static_cast<size_t>(p)].push_back(i);
      ++indegree[static_cast<size_t>(i)];
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[static_cast<size_t>(i)] == 0) ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int s : succs[static_cast<size_t>(i)])
      if (--indegree[static_cast<size_t>(s)] == 0) ready.push(s);
  }
  if (order.size() != static_cast<size_t>(n)) {
    value_error("onnx: the graph has a cycle: ", describe_cycle(graph, preds, indegree));
  }
  return order;
}

}  // namespace anvil::frontend::onnx
