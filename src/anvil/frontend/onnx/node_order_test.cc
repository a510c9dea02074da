// node_order: file order when sorted, a stable topological order otherwise, and the errors.
#include "anvil/frontend/onnx/node_order.h"

#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

using testing::error_of;

NodeProto* add_node(GraphProto& g, std::vector<std::string> ins, std::vector<std::string> outs, const std::string& name) {
  NodeProto* n = g.add_node();
  n->set_op_type("Op");
  n->set_name(name);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return n;
}

TEST(OnnxNodeOrder, SortedGraphsKeepTheFileOrder) {
  GraphProto g;
  add_node(g, {"x"}, {"a"}, "n0");
  add_node(g, {"x"}, {"b"}, "n1");
  add_node(g, {"a", "b", ""}, {"c", ""}, "n2");  // empty names: omitted optional values
  EXPECT_EQ(node_order(g, {"x"}), (std::vector<int>{0, 1, 2}));
}

TEST(OnnxNodeOrder, UnsortedGraphsSortStably) {
  GraphProto g;
  add_node(g, {"b"}, {"c"}, "n0");
  add_node(g, {"x"}, {"d"}, "n1");
  add_node(g, {"x"}, {"b"}, "n2");
  add_node(g, {"c", "d"}, {"e"}, "n3");
  EXPECT_EQ(node_order(g, {"x"}), (std::vector<int>{1, 2, 0, 3}));
}

TEST(OnnxNodeOrder, SubgraphReadsOfOuterValuesAreDependencies) {
  GraphProto g;
  NodeProto* branch = add_node(g, {"cond"}, {"y"}, "if");
  auto* attr = branch->add_attribute();
  attr->set_name("then_branch");
  attr->set_type(AttributeProto::GRAPH);
  add_node(*attr->mutable_g(), {"late", "inner"}, {"out"}, "body");  // "inner" is the body's own
  add_node(g, {"x"}, {"late"}, "producer");
  EXPECT_EQ(node_order(g, {"x", "cond"}), (std::vector<int>{1, 0}));
}

TEST(OnnxNodeOrder, Errors) {
  GraphProto dup;
  add_node(dup, {"x"}, {"a"}, "first");
  add_node(dup, {"x"}, {"a"}, "second");
  EXPECT_EQ(error_of([&] { node_order(dup, {"x"}); }),
            "onnx: value 'a' is produced twice: by node 'first' (Op) and by node 'second' (Op)");
  GraphProto shadow;
  add_node(shadow, {"x"}, {"x"}, "");
  EXPECT_EQ(error_of([&] { node_order(shadow, {"x"}); }),
            "onnx: node 0 (Op) produces 'x', which is already a graph input or initializer");
  GraphProto self;
  add_node(self, {"x"}, {"a"}, "ok");
  add_node(self, {"s"}, {"s"}, "loop");
  EXPECT_EQ(error_of([&] { node_order(self, {"x"}); }), "onnx: the graph has a cycle: node 'loop' (Op) -> node 'loop' (Op)");
}

}  // namespace
}  // namespace anvil::frontend::onnx
