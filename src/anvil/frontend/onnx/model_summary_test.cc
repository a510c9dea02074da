#include "anvil/frontend/onnx/model_summary.h"

#include <gtest/gtest.h>

#include "anvil/frontend/onnx/test_models.h"

namespace anvil::frontend::onnx {
namespace {

using testing::set_tensor_type;
using testing::small_model;

// small_model plus: w listed as a graph input too (old exporters do), a 0-d input, an input of
// unknown rank and one with an unnamed dim, a custom-domain node, an If with a Relu inside, an
// int64 initializer in external data.
ModelProto rich_model() {
  ModelProto model = small_model();
  auto* ms = model.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  GraphProto* g = model.mutable_graph();
  set_tensor_type(g->add_input(), "w", TensorProto::FLOAT, {"3"});
  set_tensor_type(g->add_input(), "flag", TensorProto::BOOL, {});
  ValueInfoProto* any = g->add_input();
  any->set_name("any");
  any->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT16);
  set_tensor_type(g->add_input(), "ids", TensorProto::INT64, {"batch", "?", "seq*2"});
  set_tensor_type(g->add_output(), "z", TensorProto::BFLOAT16, {"1"});
  TensorProto* shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(TensorProto::INT64);
  shape->add_dims(1000);
  shape->set_data_location(TensorProto::EXTERNAL);
  NodeProto* gelu = g->add_node();
  gelu->set_op_type("Gelu");
  gelu->set_domain("com.microsoft");
  NodeProto* cond = g->add_node();
  cond->set_op_type("If");
  AttributeProto* then_branch = cond->add_attribute();
  then_branch->set_name("then_branch");
  then_branch->mutable_g()->add_node()->set_op_type("Relu");
  return model;
}

TEST(ModelSummary, ListsInputsThatAreNotInitializersWithTheirDims) {
  ModelSummary s = summarize_model(rich_model(), "rich.onnx");
  ASSERT_EQ(s.inputs.size(), 4u);
  EXPECT_EQ(s.inputs[0].name, "x");
  EXPECT_EQ(format_dims(s.inputs[0]), "[N, 3]");
  EXPECT_EQ(s.inputs[1].name, "flag");
  EXPECT_EQ(s.inputs[1].dtype, "bool");
  EXPECT_EQ(format_dims(s.inputs[1]), "[]");
  EXPECT_EQ(s.inputs[2].dtype, "float16");
  EXPECT_EQ(format_dims(s.inputs[2]), "unknown rank");
  EXPECT_EQ(format_dims(s.inputs[3]), "[batch, ?, seq*2]");
  ASSERT_EQ(s.outputs.size(), 2u);
  EXPECT_EQ(s.outputs[1].dtype, "bfloat16");
}

TEST(ModelSummary, CountsOperatorsInSubgraphsAndInitializerBytes) {
  ModelSummary s = summarize_model(rich_model(), "rich.onnx");
  using Count = std::pair<std::string, int64_t>;
  EXPECT_EQ(s.op_counts, (std::vector<Count>{{"Add", 1}, {"If", 1}, {"Relu", 2}, {"com.microsoft.Gelu", 1}}));
  EXPECT_EQ(s.node_count, 5);
  EXPECT_EQ(s.initializer_count, 2);
  EXPECT_EQ(s.initializer_bytes, 3u * 4 + 1000u * 8);
  EXPECT_EQ(s.external_initializer_count, 1);
  EXPECT_EQ(s.opsets, (std::vector<Count>{{"ai.onnx", 17}, {"com.microsoft", 1}}));
  EXPECT_EQ(s.producer, "anvil-test 1.0");
}

TEST(ModelSummary, FormatsAnAlignedTable) {
  std::string text = format_summary(summarize_model(rich_model(), "rich.onnx"));
  EXPECT_EQ(text,
            "model         rich.onnx\n"
            "ir_version    8\n"
            "producer      anvil-test 1.0\n"
            "graph         small\n"
            "opsets        ai.onnx 17, com.microsoft 1\n"
            "nodes         5\n"
            "initializers  2, 8012 bytes (7.8 KiB), 1 in external data\n"
            "\n"
            "inputs (4)\n"
            "  name  dtype    shape\n"
            "  x     float32  [N, 3]\n"
            "  flag  bool     []\n"
            "  any   float16  unknown rank\n"
            "  ids   int64    [batch, ?, seq*2]\n"
            "\n"
            "outputs (2)\n"
            "  name  dtype     shape\n"
            "  y     float32   [N, 3]\n"
            "  z     bfloat16  [1]\n"
            "\n"
            "operators (4 types, 5 nodes)\n"
            "  op_type             count\n"
            "  Add                 1\n"
            "  If                  1\n"
            "  Relu                2\n"
            "  com.microsoft.Gelu  1\n");
}

TEST(ModelSummary, AbsurdDimsSaturateInsteadOfOverflowing) {
  ModelProto model = small_model();
  TensorProto* t = model.mutable_graph()->add_initializer();
  t->set_data_type(TensorProto::DOUBLE);
  t->add_dims(int64_t{1} << 62);
  t->add_dims(int64_t{1} << 62);
  EXPECT_EQ(summarize_model(model).initializer_bytes, UINT64_MAX);
  EXPECT_NE(format_summary(summarize_model(model)).find("more than 2^64 bytes"), std::string::npos);
}

}  // namespace
}  // namespace anvil::frontend::onnx
