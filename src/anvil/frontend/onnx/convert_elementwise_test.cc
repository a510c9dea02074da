// ONNX converters of the elementwise and reduce families: small models built in C++ and
// imported with from_onnx; the graph calls they become (op names and attributes), the
// inferred output types on symbolic inputs, opset-dependent forms (Clip, ReduceSum axes) and
// known-values propagation.
#include <gtest/gtest.h>

#include <mutex>

#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/frontend/onnx/test_models.h"
#include "anvil/graph/printer.h"

namespace anvil::frontend::onnx {
namespace {

using testing::set_tensor_type;

std::vector<int64_t> g_known;  // what TestKnown read of its input's known values

void register_test_converters() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_converter("TestKnown", [](ImportContext& ctx) {
      g_known = ctx.const_ints(0, "values");
      return std::vector<graph::Expr>{ctx.input(0)};
    });
  });
}

struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset = 17) : ModelBuilder(opset, "test") { register_test_converters(); }
  void init_i64(const std::string& name, std::vector<int64_t> values) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
  }
  void init_f32_scalar(const std::string& name, float v) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    t->add_float_data(v);
  }
  graph::IRModule import() const { return from_onnx(proto); }
};

void attr_int(NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INT);
  a->set_i(v);
}
void attr_float(NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::FLOAT);
  a->set_f(v);
}
void attr_ints(NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// "op{attr=value, ...}" of every call binding, in order.
std::vector<std::string> calls_of(const graph::IRModule& mod) {
  std::vector<std::string> out;
  for (const graph::Binding& b : mod.main().bindings()) {
    const auto* c = b.value.as<graph::CallNode>();
    if (c == nullptr) continue;
    std::string s = c->op();
    if (!c->attrs().empty()) {
      s += "{";
      bool first = true;
      for (const auto& [k, v] : c->attrs()) {
        s += (first ? "" : ", ") + k + "=" + graph::to_string(v);
        first = false;
      }
      s += "}";
    }
    out.push_back(s);
  }
  return out;
}

std::string result_type(const graph::IRModule& mod) { return graph::to_string(mod.main().result().type()); }

using Calls = std::vector<std::string>;

TEST(OnnxConvertElementwise, BinaryBroadcastAndVariadicChains) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "1"});
  m.input("y", TensorProto::FLOAT, {"4"});
  m.input("z", TensorProto::FLOAT, {"1", "4"});
  m.node("Add", {"x", "y"}, {"a"});
  m.node("Sum", {"a", "y", "z"}, {"s"});
  m.node("Mean", {"s", "z"}, {"mean"});
  m.node("Greater", {"mean", "y"}, {"g"});
  m.node("Where", {"g", "mean", "z"}, {"w"});
  m.output("w");
  graph::IRModule mod = m.import();
  EXPECT_EQ(calls_of(mod), (Calls{"add", "add", "add", "add", "divide", "greater", "where"}));
  EXPECT_EQ(result_type(mod), "Tensor[(N, 4), float32]");
}

TEST(OnnxConvertElementwise, ActivationsCarryTheirAttributes) {
  Model m(20);
  m.input("x", TensorProto::FLOAT, {"N", "3"});
  attr_float(m.node("LeakyRelu", {"x"}, {"a"}), "alpha", 0.25f);
  m.node("HardSigmoid", {"a"}, {"b"});
  auto* gelu = m.node("Gelu", {"b"}, {"c"});
  auto* a = gelu->add_attribute();
  a->set_name("approximate");
  a->set_type(AttributeProto::STRING);
  a->set_s("tanh");
  m.node("IsNaN", {"c"}, {"d"});
  m.output("d");
  graph::IRModule mod = m.import();
  EXPECT_EQ(calls_of(mod), (Calls{"leaky_relu{alpha=0.25}", "hard_sigmoid{alpha=0.2, beta=0.5}",
                                  "gelu{approximate=\"tanh\"}", "isnan"}));
  EXPECT_EQ(result_type(mod), "Tensor[(N, 3), bool]");
}

TEST(OnnxConvertElementwise, ClipAttributesBeforeOpset11AndInputsAfter) {
  Model old(9);
  old.input("x", TensorProto::FLOAT, {"5"});
  attr_float(old.node("Clip", {"x"}, {"y"}), "max", 6.0f);
  old.output("y");
  EXPECT_EQ(calls_of(old.import()), (Calls{"clip{max=6.0}"}));
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"5"});
  m.input("hi", TensorProto::FLOAT, {});
  m.init_f32_scalar("lo", 0.0f);
  m.node("Clip", {"x", "lo", "hi"}, {"y"});
  m.node("Clip", {"y", "", "hi"}, {"z"});
  m.output("z");
  EXPECT_EQ(calls_of(m.import()), (Calls{"clip{min=0.0}", "minimum", "minimum"}));
}

TEST(OnnxConvertElementwise, CastPowAndDropout) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N"});
  m.input("e", TensorProto::INT64, {"1"});
  attr_int(m.node("Cast", {"x"}, {"c"}), "to", TensorProto::INT32);
  m.node("Pow", {"x", "e"}, {"p"});
  m.node("Dropout", {"p"}, {"d", "mask"});
  m.output("c");
  m.output("d");
  m.output("mask");
  graph::IRModule mod = m.import();
  EXPECT_EQ(calls_of(mod), (Calls{"cast{dtype=int32}", "cast{dtype=float32}", "power", "isnan", "logical_not",
                                  "logical_or"}));
  EXPECT_EQ(result_type(mod), "Tuple[Tensor[(N,), int32], Tensor[(N,), float32], Tensor[(N,), bool]]");
}

TEST(OnnxConvertElementwise, KnownValuesPropagateThroughIntegerArithmetic) {
  Model m;
  m.init_i64("a", {2, 3, 4});
  m.init_i64("b", {2});
  m.init_i64("c", {3, 3, 5});
  m.node("Mul", {"a", "b"}, {"ab"});
  m.node("Div", {"ab", "b"}, {"q"});
  m.node("Max", {"q", "c"}, {"mx"});
  m.node("Equal", {"mx", "c"}, {"eq"});
  m.node("Where", {"eq", "a", "mx"}, {"w"});
  m.node("TestKnown", {"w"}, {"out"});
  m.output("out");
  m.import();
  // q = a = (2, 3, 4); mx = (3, 3, 5); eq = (1, 1, 1): w = a.
  EXPECT_EQ(g_known, (std::vector<int64_t>{2, 3, 4}));
}

TEST(OnnxConvertElementwise, KnownValuesPropagateThroughModLogicalAndNeg) {
  // Attention's function body: InterleaveDim = Where(Not(Equal(qh, kvh)) And Equal(qh % kvh, 0),
  // Cast(qh / kvh), [1]); LayerNormalization's: ConstantOfShape(Neg(axis)).
  Model m;
  m.init_i64("qh", {6});
  m.init_i64("kvh", {4, 2, 6});
  m.init_i64("zero", {0});
  m.init_i64("one", {1});
  m.init_i64("neg", {-7, 7, -3});
  m.node("Equal", {"qh", "kvh"}, {"same"});
  m.node("Not", {"same"}, {"gqa1"});
  m.node("Mod", {"qh", "kvh"}, {"rem"});
  m.node("Equal", {"rem", "zero"}, {"gqa2"});
  m.node("And", {"gqa1", "gqa2"}, {"gqa"});
  m.node("Div", {"qh", "kvh"}, {"q"});
  m.node("Where", {"gqa", "q", "one"}, {"w"});  // (1, 3, 1)
  m.node("Neg", {"neg"}, {"n"});                // (7, -7, 3)
  attr_int(m.node("Mod", {"n", "kvh"}, {"r0"}), "fmod", 0);   // the divisor's sign: (3, 1, 3)
  attr_int(m.node("Mod", {"neg", "kvh"}, {"r1"}), "fmod", 1);  // the dividend's: (-3, 1, -3)
  m.node("Abs", {"r1"}, {"a"});                                 // (3, 1, 3)
  m.node("Or", {"gqa1", "gqa2"}, {"or"});                       // (1, 1, 1)
  attr_int(m.node("Cast", {"neg"}, {"nb"}), "to", TensorProto::BOOL);
  m.node("Xor", {"nb", "same"}, {"xor"});                       // (1, 1, 0)
  m.node("Concat", {"w", "n", "r0", "a", "or", "xor"}, {"all"});
  attr_int(m.g->mutable_node(m.g->node_size() - 1), "axis", 0);
  m.node("TestKnown", {"all"}, {"out"});
  m.output("out");
  m.import();
  EXPECT_EQ(g_known, (std::vector<int64_t>{1, 3, 1, 7, -7, 3, 3, 1, 3, 3, 1, 3, 1, 1, 1, 1, 1, 0}));
}

TEST(OnnxConvertElementwise, SymbolicKnownValuesDecideComparisonsAndShapeAnExpand) {
  // Expand(y, Concat(Where(Equal(2n % 2, 0), n, 1), [4])) of x: [N, 4]: the condition is true for
  // every N, so the shape is (N, 4) and Expand a broadcast_to to it.
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "4"});
  m.input("y", TensorProto::FLOAT, {"1", "4"});
  m.init_i64("two", {2});
  m.init_i64("zero", {0});
  m.init_i64("one", {1});
  m.init_i64("four", {4});
  auto* shape = m.node("Shape", {"x"}, {"n"});
  attr_int(shape, "end", 1);
  m.node("Mul", {"n", "two"}, {"n2"});
  m.node("Mod", {"n2", "two"}, {"r"});
  m.node("Equal", {"r", "zero"}, {"even"});
  m.node("GreaterOrEqual", {"n", "zero"}, {"nonneg"});
  m.node("And", {"even", "nonneg"}, {"cond"});
  m.node("Where", {"cond", "n", "one"}, {"d0"});
  attr_int(m.node("Concat", {"d0", "four"}, {"s"}), "axis", 0);
  m.node("Expand", {"y", "s"}, {"z"});
  m.output("z");
  graph::IRModule mod = m.import();
  std::vector<std::string> calls = calls_of(mod);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), "broadcast_to");
  EXPECT_EQ(result_type(mod), "Tensor[(N, 4), float32]");
}

TEST(OnnxConvertElementwise, LayerNormFunctionBodyShapesStaySymbolic) {
  // LayerNormalization's function body at axis -2 on x: [N, S, 4, 5]: the statistics' shape is
  // Concat(Slice(Shape(x), 0, axis), ConstantOfShape(Neg(axis)) of ones) = (N, S, 1, 1).
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "S", "4", "5"});
  m.init_i64("zero", {0});
  m.init_i64("axis", {-2});
  m.node("Shape", {"x"}, {"xs"});
  m.node("Size", {"xs"}, {"rank"});
  m.node("Slice", {"xs", "zero", "axis"}, {"prefix"});
  m.node("Neg", {"axis"}, {"reduced"});
  NodeProto* ones = m.node("ConstantOfShape", {"reduced"}, {"suffix"});
  auto* value = ones->add_attribute();
  value->set_name("value");
  value->set_type(AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(1);
  attr_int(m.node("Concat", {"prefix", "suffix"}, {"stats_shape"}), "axis", 0);
  attr_int(m.node("Flatten", {"x"}, {"x2"}), "axis", -2);
  attr_ints(m.node("ReduceMean", {"x2"}, {"mean2"}), "axes", {1});
  m.node("Reshape", {"mean2", "stats_shape"}, {"mean"});
  m.node("Reshape", {"x2", "xs"}, {"y"});
  m.output("mean");
  m.output("y");
  graph::IRModule mod = m.import();
  // (negative of the constant axis is emitted too; fold_constant takes it later.)
  EXPECT_EQ(calls_of(mod), (Calls{"negative", "reshape", "mean{axes=[1], keepdims=1}", "reshape", "reshape"}));
  EXPECT_EQ(result_type(mod), "Tuple[Tensor[(N, S, 1, 1), float32], Tensor[(N, S, 4, 5), float32]]");
}

TEST(OnnxConvertElementwise, CastOfASmallIntegerConstantToFloatFolds) {
  // The window functions' expansion: Range(0, Cast(size, float), 1) needs its limit at import.
  Model m(17);
  m.init_i64("size", {5});
  m.init_f32_scalar("zero", 0.0f);
  m.init_f32_scalar("one", 1.0f);
  attr_int(m.node("Cast", {"size"}, {"n"}), "to", TensorProto::FLOAT);
  m.node("Range", {"zero", "n", "one"}, {"r"});
  m.output("r");
  graph::IRModule mod = m.import();
  EXPECT_EQ(calls_of(mod), (Calls{"arange{delta=1.0, dtype=float32, limit=5.0, start=0.0}"}));
  EXPECT_EQ(result_type(mod), "Tensor[(5,), float32]");
}

TEST(OnnxConvertReduce, AxesAsAttributeOrInputAndComposedReductions) {
  Model old(11);
  old.input("x", TensorProto::FLOAT, {"N", "3", "5"});
  attr_ints(old.node("ReduceSum", {"x"}, {"s"}), "axes", {1});
  auto* l2 = old.node("ReduceL2", {"s"}, {"l2"});
  attr_ints(l2, "axes", {-1});
  attr_int(l2, "keepdims", 0);
  old.output("l2");
  graph::IRModule a = old.import();
  EXPECT_EQ(calls_of(a), (Calls{"sum{axes=[1], keepdims=1}", "multiply", "sum{axes=[-1], keepdims=0}", "sqrt"}));
  EXPECT_EQ(result_type(a), "Tensor[(N, 1), float32]");

  Model m(18);
  m.input("x", TensorProto::FLOAT, {"N", "3", "5"});
  m.init_i64("axes", {0, 2});
  attr_int(m.node("ReduceMean", {"x", "axes"}, {"mean"}), "keepdims", 0);
  auto* noop = m.node("ReduceMax", {"x"}, {"same"});
  attr_int(noop, "noop_with_empty_axes", 1);
  m.node("ReduceLogSumExp", {"x", "axes"}, {"lse"});
  m.output("mean");
  m.output("same");
  m.output("lse");
  graph::IRModule b = m.import();
  EXPECT_EQ(calls_of(b), (Calls{"mean{axes=[0, 2], keepdims=0}", "max{axes=[0, 2], keepdims=1}", "subtract", "exp",
                                "sum{axes=[0, 2], keepdims=1}", "log", "add"}));
  EXPECT_EQ(result_type(b), "Tuple[Tensor[(3,), float32], Tensor[(N, 3, 5), float32], Tensor[(1, 3, 1), float32]]");
}

TEST(OnnxConvertReduce, ArgMaxCumSumTopK) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "7"});
  m.init_i64("axis", {1});
  m.init_i64("k", {3});
  auto* am = m.node("ArgMax", {"x"}, {"am"});
  attr_int(am, "axis", -1);
  attr_int(am, "keepdims", 0);
  m.node("CumSum", {"x", "axis"}, {"cs"});
  m.node("TopK", {"cs", "k"}, {"v", "i"});
  m.output("am");
  m.output("v");
  m.output("i");
  graph::IRModule mod = m.import();
  EXPECT_EQ(calls_of(mod)[0], "argmax{axis=-1, keepdims=0, select_last_index=0}");
  EXPECT_EQ(calls_of(mod)[1], "cumsum{axis=1, exclusive=0, reverse=0}");
  EXPECT_EQ(result_type(mod), "Tuple[Tensor[(N,), int64], Tensor[(N, 3), float32], Tensor[(N, 3), int64]]");
}

// TopK's K as a graph input: its value a run-time Shape (tensor_to_shape), topk's second
// argument, the outputs' axis that Var (named after the output and "K"; no k attr).
TEST(OnnxConvertReduce, TopKWithARunTimeK) {
  Model m(13);
  m.input("x", TensorProto::FLOAT, {"N", "7"});
  m.input("k", TensorProto::INT64, {"1"});
  m.node("TopK", {"x", "k"}, {"v", "i"});
  m.output("v");
  m.output("i");
  graph::IRModule mod = m.import();
  Calls calls = calls_of(mod);
  ASSERT_FALSE(calls.empty());
  EXPECT_EQ(calls.back(), "topk{axis=-1, largest=1, sorted=1}");
  EXPECT_EQ(result_type(mod), "Tuple[Tensor[(N, v_K), float32], Tensor[(N, v_K), int64]]");
}

}  // namespace
}  // namespace anvil::frontend::onnx
