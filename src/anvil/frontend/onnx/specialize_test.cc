// Axes known only at run time (specialize.h), through the importer: one branch Function per
// candidate set of axes, selected by ifs; result dims that differ per candidate become fresh
// dims; Squeeze keeps only axes whose dim may be 1; too many variants is unsupported, naming the
// count. The run-time behaviour (every candidate against numpy, a wrong value's error) is
// tests/python/test_onnx_runtime_axes.py.
#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/frontend/onnx/test_models.h"
#include "anvil/graph/printer.h"

namespace anvil::frontend::onnx {
namespace {

struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset) : ModelBuilder(opset, "test") {}
  graph::IRModule import(const std::string& out) {
    g->clear_output();
    g->add_output()->set_name(out);
    return from_onnx(proto);
  }
};

void attr_int(NodeProto* n, const std::string& name, int64_t v) {
  AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}

// The module's functions whose name starts with `prefix`.
int count_functions(const graph::IRModule& mod, const std::string& prefix) {
  int n = 0;
  for (const auto& [name, f] : mod.functions) n += name.rfind(prefix, 0) == 0;
  return n;
}

TEST(OnnxRuntimeAxes, ReduceImportsOneBranchPerSetOfAxes) {
  Model m(18);
  m.input("x", TensorProto::FLOAT, {"3", "4", "5"});
  m.input("axes", TensorProto::INT64, {"2"});
  attr_int(m.node("ReduceSum", {"x", "axes"}, {"y"}), "keepdims", 0);
  graph::IRModule mod = m.import("y");
  // C(3, 2) = 3 sets: [0, 1] -> (5,), [0, 2] -> (4,), [1, 2] -> (3,): the dim is a fresh one.
  EXPECT_EQ(count_functions(mod, "y_axes_"), 4);  // 3 leaves and one if between two of them
  EXPECT_EQ(graph::to_string(mod.function("y_axes_0_2").ret_type()), "Tensor[(4,), float32]");
  EXPECT_EQ(graph::to_string(mod.main().ret_type()), "Tensor[(y_d1,), float32]");
  std::string text = graph::to_string(mod);
  EXPECT_NE(text.find("check(%axes"), std::string::npos) << text;
  EXPECT_NE(text.find("sum(%x_1, axes=[0, 1], keepdims=0)"), std::string::npos) << text;
}

TEST(OnnxRuntimeAxes, CumSumUnsqueezeAndSqueezeCandidates) {
  Model m(18);
  m.input("x", TensorProto::FLOAT, {"1", "4", "N"});
  m.input("axis", TensorProto::INT32, {});
  m.input("uaxes", TensorProto::INT64, {"2"});
  m.input("saxes", TensorProto::INT64, {"1"});
  m.node("CumSum", {"x", "axis"}, {"c"});
  m.node("Unsqueeze", {"x", "uaxes"}, {"u"});
  m.node("Squeeze", {"x", "saxes"}, {"s"});
  graph::IRModule c = m.import("c");
  EXPECT_EQ(count_functions(c, "c_axes_") - count_functions(c, "c_axes_select"), 3);  // one per axis
  EXPECT_EQ(graph::to_string(c.main().ret_type()), "Tensor[(1, 4, N), float32]");   // same in every branch
  graph::IRModule u = m.import("u");  // 2 new axes among 5 output dims: C(5, 2)
  EXPECT_EQ(count_functions(u, "u_axes_") - count_functions(u, "u_axes_select"), 10);
  EXPECT_EQ(graph::to_string(u.function("u_axes_0_4").ret_type()), "Tensor[(1, 1, 4, N, 1), float32]");
  graph::IRModule s = m.import("s");  // dim 1 is 4: only axes 0 and 2 can be squeezed
  EXPECT_EQ(count_functions(s, "s_axes_") - count_functions(s, "s_axes_select"), 2);
  EXPECT_EQ(s.functions.count("s_axes_1"), 0u);
}

TEST(OnnxRuntimeAxes, TooManyVariantsIsUnsupportedWithTheCount) {
  Model m(18);
  m.input("x", TensorProto::FLOAT, {"2", "2", "2", "2", "2", "2", "2", "2"});
  m.input("axes", TensorProto::INT64, {"4"});
  m.node("ReduceMean", {"x", "axes"}, {"y"});
  try {
    m.import("y");
    FAIL() << "expected NotImplementedError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented) << e.what();
    EXPECT_NE(std::string(e.what()).find("known only at run time: 70 variants (4 of 8 axes); at most 64"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace anvil::frontend::onnx
