// ONNX transform converters through the importer: the known-values chains PyTorch exports
// (Shape -> Gather -> Unsqueeze -> Concat -> Reshape) become reshape to a ShapeExpr of the
// model's own dim Vars with 0 and -1 resolved; the opset forms of Slice, Split, Squeeze and
// Unsqueeze; result types of the other converters.
#include <gtest/gtest.h>

#include <cmath>

#include "anvil/frontend/onnx/importer.h"
#include "anvil/frontend/onnx/test_models.h"
#include "anvil/graph/printer.h"

namespace anvil::frontend::onnx {
namespace {

using testing::set_tensor_type;

struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset) : ModelBuilder(opset, "test") {}
  void ints(const std::string& name, std::vector<int64_t> values, bool scalar = false) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    if (!scalar) t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void floats(const std::string& name, std::vector<float> values) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (float v : values) t->add_float_data(v);
  }
  // The type of output `name` of the imported main function (the model's only output).
  std::string type_of(const std::string& name) {
    g->clear_output();
    g->add_output()->set_name(name);
    graph::IRModule mod = from_onnx(proto);
    return graph::to_string(mod.main().result().type());
  }
};

void attr_ints(NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
void attr_int(NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}

TEST(OnnxTransformConverters, AttentionHeadSplitBecomesSymbolicReshape) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "S", "12"});
  m.node("Shape", {"x"}, {"shape"});
  m.ints("i0", {0}, true);
  m.ints("i1", {1}, true);
  m.ints("ax", {0});
  m.ints("heads", {3, -1});
  m.node("Gather", {"shape", "i0"}, {"n"});
  m.node("Gather", {"shape", "i1"}, {"s"});
  m.node("Unsqueeze", {"n", "ax"}, {"nu"});
  m.node("Unsqueeze", {"s", "ax"}, {"su"});
  attr_int(m.node("Concat", {"nu", "su", "heads"}, {"target"}), "axis", 0);
  m.node("Reshape", {"x", "target"}, {"y"});
  attr_ints(m.node("Transpose", {"y"}, {"t"}), "perm", {0, 2, 1, 3});
  EXPECT_EQ(m.type_of("y"), "Tensor[(N, S, 3, 4), float32]");
  EXPECT_EQ(m.type_of("t"), "Tensor[(N, 3, S, 4), float32]");
  // The shape chain leaves nothing behind: one reshape and one transpose, no shape_to_tensor.
  std::string text = graph::to_string(from_onnx(m.proto));
  EXPECT_EQ(text.find("shape_to_tensor"), std::string::npos) << text;
  EXPECT_NE(text.find("reshape"), std::string::npos) << text;
}

TEST(OnnxTransformConverters, ReshapeZeroCopiesAndMinusOneDividesSymbolically) {
  Model m(14);
  m.input("x", TensorProto::FLOAT, {"N", "4", "6"});
  m.ints("s1", {0, -1});
  m.ints("s2", {-1, 8});
  m.node("Reshape", {"x", "s1"}, {"a"});
  m.node("Reshape", {"x", "s2"}, {"b"});
  m.node("Flatten", {"x"}, {"f"});
  EXPECT_EQ(m.type_of("a"), "Tensor[(N, 24), float32]");
  EXPECT_EQ(m.type_of("b"), "Tensor[(N * 3, 8), float32]");
  EXPECT_EQ(m.type_of("f"), "Tensor[(N, 24), float32]");
}

TEST(OnnxTransformConverters, SliceFormsAndKnownValues) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "10"});
  m.ints("st", {1});
  m.ints("en", {-1});
  m.ints("axes", {1});
  m.ints("big", {INT64_MAX});
  m.ints("neg", {-1});
  m.node("Slice", {"x", "st", "en", "axes"}, {"a"});
  m.node("Shape", {"x"}, {"shape"});
  m.node("Slice", {"shape", "st", "big"}, {"tail"});  // known: [10]
  m.node("ConstantOfShape", {"tail"}, {"zeros"});
  m.node("Slice", {"x", "neg", "big", "axes", "neg"}, {"rev"});  // x[:, -1:] reversed? one element
  EXPECT_EQ(m.type_of("a"), "Tensor[(N, 8), float32]");
  EXPECT_EQ(m.type_of("zeros"), "Tensor[(10,), float32]");
  EXPECT_EQ(m.type_of("rev"), "Tensor[(N, 0), float32]");
  Model old(9);
  old.input("x", TensorProto::FLOAT, {"N", "10"});
  NodeProto* s = old.node("Slice", {"x"}, {"a"});
  attr_ints(s, "starts", {0, 2});
  attr_ints(s, "ends", {INT64_MAX, 7});
  EXPECT_EQ(old.type_of("a"), "Tensor[(N, 5), float32]");
}

TEST(OnnxTransformConverters, SplitSqueezeUnsqueezeAcrossOpsets) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "10"});
  m.ints("sizes", {3, 7});
  NodeProto* s = m.node("Split", {"x", "sizes"}, {"p", "q"});
  attr_int(s, "axis", 1);
  m.ints("ax", {0});
  m.node("Unsqueeze", {"x", "ax"}, {"u"});
  m.node("Squeeze", {"u", "ax"}, {"sq"});
  EXPECT_EQ(m.type_of("q"), "Tensor[(N, 7), float32]");
  EXPECT_EQ(m.type_of("u"), "Tensor[(1, N, 10), float32]");
  EXPECT_EQ(m.type_of("sq"), "Tensor[(N, 10), float32]");
  Model old(11);
  old.input("x", TensorProto::FLOAT, {"4", "N"});
  NodeProto* e = old.node("Split", {"x"}, {"a", "b"});  // equal halves of axis 0
  (void)e;
  NodeProto* u = old.node("Unsqueeze", {"a"}, {"u"});
  attr_ints(u, "axes", {-1});
  EXPECT_EQ(old.type_of("b"), "Tensor[(2, N), float32]");
  EXPECT_EQ(old.type_of("u"), "Tensor[(2, N, 1), float32]");
}

TEST(OnnxTransformConverters, ExpandTilePadConcatGather) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "1"});
  m.input("ids", TensorProto::INT64, {"2", "3"});
  m.ints("shape", {2, 1, 5});
  m.ints("reps", {2, 3});
  m.ints("pads", {1, 0, 2, 3});
  m.node("Expand", {"x", "shape"}, {"e"});
  m.node("Tile", {"x", "reps"}, {"t"});
  m.node("Pad", {"x", "pads"}, {"p"});
  NodeProto* c = m.node("Concat", {"x", "x"}, {"c"});
  attr_int(c, "axis", 0);
  NodeProto* g = m.node("Gather", {"x", "ids"}, {"g"});
  attr_int(g, "axis", 0);
  EXPECT_EQ(m.type_of("e"), "Tensor[(2, N, 5), float32]");
  EXPECT_EQ(m.type_of("t"), "Tensor[(N * 2, 3), float32]");
  EXPECT_EQ(m.type_of("p"), "Tensor[(N + 3, 4), float32]");
  EXPECT_EQ(m.type_of("c"), "Tensor[(N * 2, 1), float32]");
  EXPECT_EQ(m.type_of("g"), "Tensor[(2, 3, 1), float32]");
}

TEST(OnnxTransformConverters, ResizeScalesSizesAndUpsample) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "3", "4", "5"});
  m.floats("scales", {1, 1, 2, 0.5});
  m.ints("sizes", {1, 3, 7, 9});
  m.node("Resize", {"x", "", "scales"}, {"a"});
  m.node("Resize", {"x", "", "", "sizes"}, {"b"});
  EXPECT_EQ(m.type_of("a"), "Tensor[(N, 3, 8, 2), float32]");
  EXPECT_EQ(m.type_of("b"), "Tensor[(N, 3, 7, 9), float32]");
  Model old(9);
  old.input("x", TensorProto::FLOAT, {"1", "3", "4", "N"});
  old.floats("scales", {1, 1, 2, 3});
  old.node("Upsample", {"x", "scales"}, {"u"});
  EXPECT_EQ(old.type_of("u"), "Tensor[(1, 3, 8, N * 3), float32]");
  // antialias (linear) becomes resize2d_antialias; a tf_crop_and_resize roi that is a graph input
  // is resize2d's run-time argument (its H/W positions in roi_index; axes [3, 2] reorder them).
  Model aa(18);
  aa.input("x", TensorProto::FLOAT, {"1", "3", "8", "8"});
  aa.input("roi", TensorProto::FLOAT, {"4"});
  aa.floats("scales", {1, 1, 0.5, 0.5});
  aa.ints("sizes", {5, 6});
  auto* n1 = aa.node("Resize", {"x", "", "scales"}, {"a"});
  auto* mode = n1->add_attribute();
  mode->set_name("mode"), mode->set_type(AttributeProto::STRING), mode->set_s("linear");
  attr_int(n1, "antialias", 1);
  auto* n2 = aa.node("Resize", {"x", "roi", "", "sizes"}, {"c"});
  auto* ct = n2->add_attribute();
  ct->set_name("coordinate_transformation_mode"), ct->set_type(AttributeProto::STRING), ct->set_s("tf_crop_and_resize");
  attr_ints(n2, "axes", {3, 2});
  EXPECT_EQ(aa.type_of("a"), "Tensor[(1, 3, 4, 4), float32]");
  EXPECT_EQ(aa.type_of("c"), "Tensor[(1, 3, 6, 5), float32]");
  std::string text = graph::to_string(from_onnx(aa.proto));
  EXPECT_NE(text.find("resize2d_antialias("), std::string::npos) << text;
  EXPECT_NE(text.find("roi_index=[1, 0, 3, 2]"), std::string::npos) << text;
}

TEST(OnnxTransformConverters, RangeOfASymbolicLengthAndScatterGatherNd) {
  Model m(16);
  m.input("x", TensorProto::FLOAT, {"N", "S"});
  m.input("ids", TensorProto::INT64, {"2", "1"});
  m.input("rows", TensorProto::FLOAT, {"2", "S"});
  m.ints("zero", {0}, true);
  m.ints("one", {1}, true);
  m.node("Shape", {"x"}, {"shape"});
  m.node("Gather", {"shape", "one"}, {"s"});
  m.node("Range", {"zero", "s", "one"}, {"pos"});
  m.node("ScatterND", {"x", "ids", "rows"}, {"sc"});
  m.node("GatherND", {"x", "ids"}, {"g"});
  EXPECT_EQ(m.type_of("pos"), "Tensor[(S,), int64]");
  EXPECT_EQ(m.type_of("sc"), "Tensor[(N, S), float32]");
  EXPECT_EQ(m.type_of("g"), "Tensor[(2, S), float32]");
}

TEST(OnnxTransformConverters, EinsumForms) {
  Model m(12);
  m.input("a", TensorProto::FLOAT, {"N", "3", "4"});
  m.input("b", TensorProto::FLOAT, {"N", "4", "5"});
  m.input("v", TensorProto::FLOAT, {"4"});
  auto eq = [](NodeProto* n, const std::string& e) {
    auto* a = n->add_attribute();
    a->set_name("equation");
    a->set_type(AttributeProto::STRING);
    a->set_s(e);
  };
  eq(m.node("Einsum", {"a", "b"}, {"mm"}), "bij,bjk->bik");
  eq(m.node("Einsum", {"a"}, {"t"}), "...ij->...ji");
  eq(m.node("Einsum", {"a", "v"}, {"mv"}), "nij,j->ni");
  eq(m.node("Einsum", {"v", "v"}, {"dot"}), "i,i");
  EXPECT_EQ(m.type_of("mm"), "Tensor[(N, 3, 5), float32]");
  EXPECT_EQ(m.type_of("t"), "Tensor[(N, 4, 3), float32]");
  EXPECT_EQ(m.type_of("mv"), "Tensor[(N, 3), float32]");
  EXPECT_EQ(m.type_of("dot"), "Tensor[(), float32]");
  // Diagonals: a repeated index inside one operand (values: tests/python/test_onnx_einsum.py).
  Model d(12);
  d.input("a", TensorProto::FLOAT, {"2", "3", "3"});
  eq(d.node("Einsum", {"a"}, {"diag"}), "bii->bi");
  eq(d.node("Einsum", {"a"}, {"trace"}), "bii");
  EXPECT_EQ(d.type_of("diag"), "Tensor[(2, 3), float32]");
  EXPECT_EQ(d.type_of("trace"), "Tensor[(2,), float32]");
  Model sym(12);
  sym.input("s", TensorProto::FLOAT, {"2", "N", "N"});
  eq(sym.node("Einsum", {"s"}, {"y"}), "bii->bi");
  EXPECT_THROW(sym.type_of("y"), Error);  // a symbolic diagonal is NotImplementedError
}

TEST(OnnxTransformConverters, SliceWithASymbolicEndFromAShapeChain) {
  // BERT-style embeddings: position_ids[:, :seq_len] of a [1, 512] buffer.
  Model m(13);
  m.input("ids", TensorProto::INT64, {"B", "S"});
  m.input("pos", TensorProto::INT64, {"1", "512"});
  m.ints("one", {1});
  m.ints("zero", {0});
  m.node("Shape", {"ids"}, {"shape"});
  m.node("Slice", {"shape", "one", "one"}, {"empty"});
  m.ints("two", {2});
  m.node("Slice", {"shape", "one", "two"}, {"seq"});  // known: [S]
  m.node("Slice", {"pos", "zero", "seq", "one"}, {"p"});
  EXPECT_EQ(m.type_of("seq"), "Tensor[(1,), int64]");
  EXPECT_EQ(m.type_of("p"), "Tensor[(1, S), int64]");
}

TEST(OnnxTransformConverters, NonZeroAndSliceOfRunTimeValuesGetFreshDims) {
  // Shapes from values: NonZero's count and the extents of a Slice by run-time starts are new
  // symbolic dims (named after the output), the unsliced dims stay the input's.
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "3"});
  m.input("st", TensorProto::INT64, {"1"});
  m.input("ax", TensorProto::INT64, {"1"});
  m.ints("en", {100});
  m.ints("axes", {-1});
  m.node("NonZero", {"x"}, {"nz"});
  m.node("Slice", {"x", "st", "en", "axes"}, {"sl"});
  m.node("Slice", {"x", "st", "en", "ax"}, {"any"});  // run-time axes: every dim fresh
  EXPECT_EQ(m.type_of("nz"), "Tensor[(2, nz_nnz), int64]");
  EXPECT_EQ(m.type_of("sl"), "Tensor[(N, sl_d1), float32]");
  EXPECT_EQ(m.type_of("any"), "Tensor[(any_d0, any_d1), float32]");
}

TEST(OnnxTransformConverters, PadByAmountsKnownOnlyAsDims) {
  // Attention's function body pads its mask to the total length: pads = [0, T - L] on axis -1.
  Model m(18);
  m.input("mask", TensorProto::FLOAT, {"4", "L"});
  m.input("k", TensorProto::FLOAT, {"N", "T", "8"});
  m.ints("zero", {0});
  m.ints("last", {-1});
  m.floats("neg_inf", {-INFINITY});
  NodeProto* total = m.node("Shape", {"k"}, {"total"});
  attr_int(total, "start", -2);
  attr_int(total, "end", -1);
  attr_int(m.node("Shape", {"mask"}, {"len"}), "start", -1);
  m.node("Sub", {"total", "len"}, {"missing"});
  attr_int(m.node("Concat", {"zero", "missing"}, {"pads"}), "axis", 0);
  m.node("Pad", {"mask", "pads", "neg_inf", "last"}, {"p"});
  // pads on both sides of axis 0 by N and 1: blocks before and after.
  attr_int(m.node("Shape", {"k"}, {"n"}), "end", 1);
  m.ints("one", {1});
  attr_int(m.node("Concat", {"n", "zero", "one", "zero"}, {"pads2"}), "axis", 0);
  m.node("Pad", {"mask", "pads2"}, {"q"});
  EXPECT_EQ(m.type_of("p"), "Tensor[(4, T), float32]");
  EXPECT_EQ(m.type_of("q"), "Tensor[(N + 5, L), float32]");
}

}  // namespace
}  // namespace anvil::frontend::onnx
