// The importer core: graph inputs and their dims, input_shapes, initializers and constants,
// known values, node order, and the errors naming nodes, opsets and tensors. Operator
// conversions are the family files' tests; here test-only converters (op types "Test*") pass
// values through, so nothing depends on which graph operators exist.
#include "anvil/frontend/onnx/importer.h"

#include <mutex>

#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/graph_inputs.h"
#include "anvil/frontend/onnx/test_models.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/printer.h"

namespace anvil::frontend::onnx {
namespace {

using testing::error_of;
using testing::set_tensor_type;

std::vector<int64_t> g_const_ints;  // what TestConstInts read

void register_test_converters() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_converter("TestIdentity", [](ImportContext& ctx) { return std::vector<graph::Expr>{ctx.input(0)}; });
    register_converter("TestConst", [](ImportContext& ctx) {
      return std::vector<graph::Expr>{ctx.constant(ctx.attr_tensor("value"))};
    });
    // Output 0: the dims of input 0 as known values only (input() materialises them).
    register_converter("TestShape", [](ImportContext& ctx) {
      ctx.set_known_values(0, ctx.input(0).type().shape());
      return std::vector<graph::Expr>{};
    });
    // Output 0: dim 0 of input 0 as a known scalar (0-d) only.
    register_converter("TestDim0", [](ImportContext& ctx) {
      ctx.set_known_values(0, {ctx.input(0).type().dim(0)}, std::vector<int64_t>{});
      return std::vector<graph::Expr>{graph::Expr()};
    });
    register_converter("TestConstInts", [](ImportContext& ctx) {
      g_const_ints = ctx.const_ints(1, "shape");
      return std::vector<graph::Expr>{ctx.input(0)};
    });
    register_converter("TestEmit", [](ImportContext& ctx) {
      return std::vector<graph::Expr>{ctx.emit(ctx.attr_string("op"), {ctx.input(0)}, {})};
    });
    register_converter("TestThrow", [](ImportContext&) -> std::vector<graph::Expr> { value_error("boom"); });
    // Reads each attribute with the getter its name says: alpha (float), axis (int), ...
    register_converter("TestAttrs", [](ImportContext& ctx) {
      if (ctx.has_attr("alpha")) (void)ctx.attr_float("alpha");
      if (ctx.has_attr("axis")) (void)ctx.attr_int("axis");
      if (ctx.has_attr("mode")) (void)ctx.attr_string("mode");
      if (ctx.has_attr("perm")) (void)ctx.attr_ints("perm");
      (void)ctx.attr_int("required");
      return std::vector<graph::Expr>{ctx.input(0)};
    });
  });
}

// A model under construction: opset ai.onnx 17 unless given.
struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset = 17) : ModelBuilder(opset, "test") { register_test_converters(); }
  NodeProto* node(const std::string& op, std::vector<std::string> ins, std::vector<std::string> outs,
                  const std::string& name = "") {
    NodeProto* n = g->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return n;
  }
  TensorProto* init_i64(const std::string& name, std::vector<int64_t> values) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t->add_int64_data(v);
    return t;
  }
  graph::IRModule import(const ImportOptions& options = {}) const { return from_onnx(proto, options); }
};

ImportOptions shapes(std::map<std::string, std::vector<int64_t>> input_shapes) {
  ImportOptions o;
  o.input_shapes = std::move(input_shapes);
  return o;
}

const graph::Function& main_of(const graph::IRModule& mod) { return mod.main(); }

std::string var_name(const ir::PrimExpr& e) {
  const auto* v = e.as<ir::VarNode>();
  return v ? v->name() : "<not a var>";
}

TEST(OnnxImporter, InputsBecomeParamsWithSharedSymbolicDims) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "3"});
  m.input("ids", TensorProto::INT64, {"N", "batch*2", "?"});
  m.input("flag", TensorProto::BOOL, {});  // 0-d
  m.node("TestIdentity", {"x"}, {"y"});
  m.output("y");
  graph::IRModule mod = m.import();
  const auto& params = main_of(mod).params();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].name(), "x");
  EXPECT_EQ(graph::to_string(params[0].type()), "Tensor[(N, 3), float32]");
  const graph::Type& ids = params[1].type();
  EXPECT_EQ(ids.dtype(), DataType::int64());
  EXPECT_TRUE(ids.dim(0).same_as(params[0].type().dim(0)));  // one dim_param, one Var
  EXPECT_EQ(var_name(ids.dim(1)), "batch_2");
  EXPECT_EQ(var_name(ids.dim(2)), "ids_d2");
  EXPECT_EQ(params[2].type().ndim(), 0);
  EXPECT_EQ(params[2].type().dtype(), DataType::boolean());
  EXPECT_TRUE(main_of(mod).result().same_as(params[0]));
  EXPECT_EQ(graph::get_strings(mod.attrs, "input_names"), (std::vector<std::string>{"x", "ids", "flag"}));
  EXPECT_EQ(graph::get_strings(mod.attrs, "output_names"), (std::vector<std::string>{"y"}));
  EXPECT_EQ(graph::get_int(mod.attrs, "opset"), 17);
}

TEST(OnnxImporter, NamesAreSanitisedAndSeveralOutputsMakeATuple) {
  Model m;
  m.input("input.1", TensorProto::FLOAT, {"2"});
  m.input("onnx::Gemm_0", TensorProto::FLOAT, {"2"});
  m.output("onnx::Gemm_0");
  m.output("input.1");
  graph::IRModule mod = m.import();
  EXPECT_EQ(main_of(mod).params()[0].name(), "input_1");
  EXPECT_EQ(main_of(mod).params()[1].name(), "onnx__Gemm_0");
  const auto* tuple = main_of(mod).result().as<graph::TupleNode>();
  ASSERT_NE(tuple, nullptr);
  EXPECT_TRUE(tuple->fields()[0].same_as(main_of(mod).params()[1]));
  EXPECT_EQ(graph::get_strings(mod.attrs, "output_names"), (std::vector<std::string>{"onnx::Gemm_0", "input.1"}));
  EXPECT_EQ(graph::to_string(mod.main()).rfind("def @main(%input_1: ", 0), 0u);
}

TEST(OnnxImporter, InitializersAndConstantNodesBecomeConstants) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2"});
  m.init_i64("shape", {4, -1});
  // An initializer that is also listed as a graph input (IR version < 4) stays a constant.
  m.input("shape", TensorProto::INT64, {"2"});
  NodeProto* c = m.node("TestConst", {}, {"c"}, "c");
  auto* attr = c->add_attribute();
  attr->set_name("value");
  attr->set_type(AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(TensorProto::INT32);
  attr->mutable_t()->add_dims(3);
  for (int v : {7, 8, 9}) attr->mutable_t()->add_int32_data(v);
  m.node("TestConstInts", {"x", "shape"}, {"a"});
  m.node("TestConstInts", {"x", "c"}, {"b"});
  m.output("shape");
  m.output("b");
  graph::IRModule mod = m.import();
  EXPECT_EQ(main_of(mod).params().size(), 1u);
  EXPECT_EQ(graph::get_strings(mod.attrs, "input_names"), (std::vector<std::string>{"x"}));
  EXPECT_EQ(g_const_ints, (std::vector<int64_t>{7, 8, 9}));
  const auto* tuple = main_of(mod).result().as<graph::TupleNode>();
  ASSERT_NE(tuple, nullptr);
  const auto* shape = tuple->fields()[0].as<graph::ConstantNode>();
  ASSERT_NE(shape, nullptr);
  EXPECT_EQ(static_cast<const int64_t*>(shape->data().data())[1], -1);
}

TEST(OnnxImporter, KnownValuesFoldToConstantsOrBecomeShapeToTensor) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2", "5"});
  m.input("y", TensorProto::FLOAT, {"n", "5"});
  m.node("TestShape", {"x"}, {"sx"});
  m.node("TestConstInts", {"x", "sx"}, {"x2"});  // the dims of x are known constants
  m.node("TestShape", {"y"}, {"sy"});
  m.node("TestIdentity", {"sx"}, {"sx2"});
  m.output("sx2");
  graph::IRModule mod = m.import();
  EXPECT_EQ(g_const_ints, (std::vector<int64_t>{2, 5}));
  const auto* c = main_of(mod).result().as<graph::ConstantNode>();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->data().dtype(), DataType::int64());
  EXPECT_EQ(c->data().shape(), (std::vector<int64_t>{2}));

  // A symbolic shape used as a tensor: shape_to_tensor of a ShapeExpr (the shape family's op).
  Model s;
  s.input("y", TensorProto::FLOAT, {"n", "5"});
  s.node("TestShape", {"y"}, {"sy"}, "shape");
  s.node("TestIdentity", {"sy"}, {"out"});
  s.output("out");
  if (graph::find_op("shape_to_tensor") != nullptr) {
    graph::IRModule smod = s.import();
    EXPECT_EQ(graph::to_string(smod.main().result().type()), "Tensor[(2,), int64]");
  } else {
    EXPECT_NE(error_of([&] { s.import(); }).find("unknown graph operator 'shape_to_tensor'"), std::string::npos);
  }

  // A scalar known value keeps its shape () when it becomes a tensor.
  for (const char* dim : {"7", "n"}) {
    Model d;
    d.input("y", TensorProto::FLOAT, {dim, "5"});
    d.node("TestDim0", {"y"}, {"n0"});
    d.node("TestIdentity", {"n0"}, {"out"});
    d.output("out");
    if (graph::find_op("shape_to_tensor") && graph::find_op("reshape")) {
      graph::IRModule dmod = d.import();
      EXPECT_EQ(graph::to_string(dmod.main().result().type()), "Tensor[(), int64]");
      if (std::string(dim) == "7") {
        const auto* c = dmod.main().result().as<graph::ConstantNode>();
        ASSERT_NE(c, nullptr);
        EXPECT_EQ(static_cast<const int64_t*>(c->data().data())[0], 7);
      }
    }
  }

  Model k;
  k.input("y", TensorProto::FLOAT, {"n", "5"});
  k.node("TestShape", {"y"}, {"sy"});
  k.node("TestConstInts", {"y", "sy"}, {"z"}, "r");
  k.output("z");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { k.import(); }, &kind),
            "onnx: node 'r' (TestConstInts, opset 17): input 1 (shape) must be known at import: 'sy' is not a constant "
            "integer tensor of at most 64 elements");
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
}

TEST(OnnxImporter, InputShapesPinDims) {
  Model m;
  m.input("ids", TensorProto::INT64, {"batch", "seq"});
  m.input("mask", TensorProto::INT64, {"batch", "seq"});
  m.input("img", TensorProto::FLOAT, {"?", "3"});
  m.input("old", TensorProto::FLOAT, {"0", "2"});
  // A negative dim_value (some exporters write -1) is an unknown dim.
  m.g->mutable_input(3)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(-1);
  m.output("mask");
  graph::IRModule mod = m.import(shapes({{"ids", {1, 128}}, {"img", {4, -1}}}));
  const auto& params = main_of(mod).params();
  EXPECT_EQ(graph::to_string(params[0].type()), "Tensor[(1, 128), int64]");
  EXPECT_EQ(graph::to_string(params[1].type()), "Tensor[(1, 128), int64]");  // the names are pinned everywhere
  EXPECT_EQ(graph::to_string(params[2].type()), "Tensor[(4, 3), float32]");
  EXPECT_EQ(var_name(params[3].type().dim(0)), "old_d0");
  mod = m.import(shapes({{"ids", {-1, 16}}}));
  EXPECT_EQ(var_name(main_of(mod).params()[1].type().dim(0)), "batch");
  EXPECT_EQ(ir::as_const_int(main_of(mod).params()[1].type().dim(1)), 16);

  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(shapes({{"ids", {1, 2, 3}}})); }, &kind),
            "onnx: input_shapes gives input 'ids' 3 dims [1, 2, 3], the model declares 2 ([batch, seq])");
  EXPECT_EQ(kind, ErrorKind::kValue);
  EXPECT_EQ(error_of([&] { m.import(shapes({{"idz", {1}}})); }),
            "onnx: input_shapes names 'idz', which is not an input of the model (inputs: 'ids', 'mask', 'img', 'old')");
  EXPECT_EQ(error_of([&] { m.import(shapes({{"img", {1, 4}}})); }),
            "onnx: input_shapes gives input 'img' dim 1 = 4, the model declares 3 ([?, 3])");
  EXPECT_EQ(error_of([&] { m.import(shapes({{"ids", {1, 8}}, {"mask", {2, 8}}})); }),
            "onnx: input_shapes pins dim 'batch' to 1 (input 'ids') and to 2 (input 'mask')");
  EXPECT_EQ(error_of([&] { m.import(shapes({{"img", {-2, 3}}})); }),
            "onnx: input_shapes gives input 'img' the dimension -2 (expected >= 0, or -1 to keep the model's)");
}

TEST(OnnxImporter, InputValuesMakeInputsConstants) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "3"});
  m.input("axes", TensorProto::INT64, {"2"});
  m.node("TestConstInts", {"x", "axes"}, {"y"});
  m.output("y");
  Tensor axes = Tensor::empty({2}, DataType::int64());
  static_cast<int64_t*>(axes.data())[0] = 1;
  static_cast<int64_t*>(axes.data())[1] = -1;
  ImportOptions options;
  options.input_values["axes"] = axes;
  graph::IRModule mod = m.import(options);
  EXPECT_EQ(g_const_ints, (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(main_of(mod).params().size(), 1u);
  EXPECT_EQ(graph::get_strings(mod.attrs, "input_names"), (std::vector<std::string>{"x"}));

  ImportOptions wrong;
  wrong.input_values["axes"] = Tensor::empty({3}, DataType::int64());
  EXPECT_EQ(error_of([&] { m.import(wrong); }),
            "onnx: input_values gives input 'axes' a tensor of shape [3], the model declares [2]");
  wrong.input_values["axes"] = Tensor::empty({2}, DataType::int32());
  EXPECT_EQ(error_of([&] { m.import(wrong); }),
            "onnx: input_values gives input 'axes' a int32 tensor, the model declares int64");
  ImportOptions unknown;
  unknown.input_values["nope"] = axes;
  EXPECT_EQ(error_of([&] { m.import(unknown); }),
            "onnx: input_values names 'nope', which is not an input of the model (inputs: 'x', 'axes')");
}

TEST(OnnxImporter, UnknownRankNeedsInputShapes) {
  Model m;
  auto* in = m.g->add_input();
  in->set_name("x");
  in->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::FLOAT);  // no shape
  m.output("x");
  EXPECT_EQ(error_of([&] { m.import(); }),
            "onnx: input 'x' has an unknown rank; give its full shape in input_shapes (--input-shapes x:1x3x224x224)");
  graph::IRModule mod = m.import(shapes({{"x", {2, 0, 7}}}));
  EXPECT_EQ(graph::to_string(main_of(mod).params()[0].type()), "Tensor[(2, 0, 7), float32]");
}

TEST(OnnxImporter, UnsupportedDtypesNameTheTensor) {
  Model m;
  m.input("x", TensorProto::COMPLEX64, {"2"});
  m.output("x");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(); }, &kind),
            std::string("onnx: input 'x' has dtype complex64; supported: ") + kSupportedDtypes);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
  Model b;
  b.input("x", TensorProto::FLOAT, {"2"});
  TensorProto* w = b.g->add_initializer();
  w->set_name("w");
  w->set_data_type(27);  // FLOAT6E2M3
  w->add_dims(1);
  w->add_int32_data(1);
  b.output("x");
  EXPECT_EQ(error_of([&] { b.import(); }, &kind),
            std::string("onnx: initializer 'w' has dtype float6e2m3; supported: ") + kSupportedDtypes);
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);

  Model c;
  c.input("x", TensorProto::FLOAT, {"2"});
  auto* attr = c.node("TestConst", {}, {"y"}, "c")->add_attribute();
  attr->set_name("value");
  attr->set_type(AttributeProto::TENSOR);
  attr->mutable_t()->set_data_type(27);
  attr->mutable_t()->add_dims(1);
  attr->mutable_t()->add_int32_data(1);
  c.output("y");
  EXPECT_EQ(error_of([&] { c.import(); }, &kind),
            "onnx: node 'c' (TestConst, opset 17): unnamed tensor: data type FLOAT6E2M3 is not supported; supported: "
            "FLOAT, FLOAT16, DOUBLE, BFLOAT16, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64, BOOL, "
            "FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, FLOAT8E8M0, INT4, UINT4, INT2, UINT2, FLOAT4E2M1");
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);
}

TEST(OnnxImporter, UnknownOpsDomainsAndOpsetsFailNamingTheNode) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2"});
  m.node("Foo", {"x"}, {"y"}, "conv1");
  m.output("y");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(); }, &kind), "onnx: node 'conv1' (Foo, opset 17): no converter for op type 'Foo'");
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);

  Model d;
  auto* ms = d.proto.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  d.input("x", TensorProto::FLOAT, {"2"});
  d.node("TestIdentity", {"x"}, {"y"})->set_domain("com.microsoft");
  d.output("y");
  EXPECT_EQ(error_of([&] { d.import(); }),
            "onnx: node 0 (com.microsoft.TestIdentity, opset 1): operators of domain 'com.microsoft' are not supported "
            "(only ai.onnx)");

  Model t;  // a training model: only ai.onnx.preview.training
  t.proto.mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
  t.proto.mutable_opset_import(0)->set_version(1);
  t.input("x", TensorProto::FLOAT, {"2"});
  t.node("Adagrad", {"x"}, {"y"}, "step")->set_domain("ai.onnx.preview.training");
  t.output("y");
  EXPECT_EQ(error_of([&] { t.import(); }, &kind),
            "onnx: node 'step' (ai.onnx.preview.training.Adagrad, opset 1): operators of domain "
            "'ai.onnx.preview.training' are not supported (only ai.onnx)");

  for (int64_t opset : {29}) {
    Model o(opset);
    o.input("x", TensorProto::FLOAT, {"2"});
    o.output("x");
    std::string msg = error_of([&] { o.import(); }, &kind);
    EXPECT_EQ(msg.rfind(str_cat("onnx: the model imports ai.onnx opset ", opset, "; Anvil imports opsets 9 to 28"), 0), 0u)
        << msg;
    EXPECT_EQ(kind, ErrorKind::kNotImplemented);
  }
  // Opsets 1 to 8 import only operators whose definition is the same at opset 9.
  Model old(8);
  old.input("x", TensorProto::FLOAT, {"2"});
  old.node("Relu", {"x"}, {"r"}, "relu");
  old.node("Upsample", {"r"}, {"y"}, "up");
  old.output("y");
  EXPECT_EQ(error_of([&] { old.import(); }, &kind),
            "onnx: node 'up' (Upsample, opset 8): in an opset 8 model only operators whose definition is opset 9's "
            "import; Upsample's is from opset 9 (convert the model with onnx.version_converter)");
  Model relu(7);
  relu.input("x", TensorProto::FLOAT, {"2"});
  relu.node("Relu", {"x"}, {"y"}, "relu");
  relu.output("y");
  EXPECT_NO_THROW(relu.import());
}

TEST(OnnxImporter, ConverterErrorsNameTheNode) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2"});
  m.node("TestThrow", {"x"}, {"y"}, "bad");
  m.output("y");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(); }, &kind), "onnx: node 'bad' (TestThrow, opset 17): boom");
  EXPECT_EQ(kind, ErrorKind::kValue);

  Model e;
  e.input("x", TensorProto::FLOAT, {"2"});
  auto* attr = e.node("TestEmit", {"x"}, {"y"}, "e")->add_attribute();
  attr->set_name("op");
  attr->set_type(AttributeProto::STRING);
  attr->set_s("no_such_graph_op");
  e.output("y");
  EXPECT_EQ(error_of([&] { e.import(); }), "onnx: node 'e' (TestEmit, opset 17): unknown graph operator 'no_such_graph_op'");
}

TEST(OnnxImporter, AttributesAreKindChecked) {
  auto with_attrs = [](const std::function<void(NodeProto*)>& add) {
    Model m;
    m.input("x", TensorProto::FLOAT, {"2"});
    NodeProto* n = m.node("TestAttrs", {"x"}, {"y"}, "a");
    add(n);
    m.output("y");
    return m;
  };
  auto int_attr = [](NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(AttributeProto::INT);
    a->set_i(v);
  };
  Model ok = with_attrs([&](NodeProto* n) {
    int_attr(n, "required", 1);
    int_attr(n, "alpha", 2);  // an INT where a FLOAT is expected converts
    auto* untyped = n->add_attribute();  // IR version 1: no type, the set field says it
    untyped->set_name("axis");
    untyped->set_i(3);
  });
  EXPECT_NO_THROW(ok.import());
  EXPECT_EQ(error_of([&] { with_attrs([](NodeProto*) {}).import(); }),
            "onnx: node 'a' (TestAttrs, opset 17): missing attribute 'required' (INT)");
  Model wrong = with_attrs([&](NodeProto* n) {
    int_attr(n, "required", 1);
    int_attr(n, "perm", 1);
  });
  EXPECT_EQ(error_of([&] { wrong.import(); }), "onnx: node 'a' (TestAttrs, opset 17): attribute 'perm' is INT, expected INTS");
}

TEST(OnnxImporter, MissingOutputsAndUndefinedValues) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2"});
  m.node("TestIdentity", {"x"}, {"y", "mask"}, "drop");
  m.output("mask");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(); }, &kind),
            "onnx: graph output 'mask': output 1 of node 'drop' (TestIdentity, opset 17) is not produced (Anvil's "
            "converter does not support it)");
  EXPECT_EQ(kind, ErrorKind::kNotImplemented);

  Model u;
  u.input("x", TensorProto::FLOAT, {"2"});
  u.node("TestIdentity", {"nowhere"}, {"y"}, "n");
  u.output("y");
  EXPECT_EQ(error_of([&] { u.import(); }, &kind),
            "onnx: node 'n' (TestIdentity) reads 'nowhere', which is no graph input, initializer or output of a node");
  EXPECT_EQ(kind, ErrorKind::kValue);

  Model none;  // a node without outputs is ignored, whatever its converter returns
  none.input("x", TensorProto::FLOAT, {"2"});
  none.node("TestIdentity", {"x"}, {});
  none.output("x");
  EXPECT_NO_THROW(none.import());

  Model o;
  o.input("x", TensorProto::FLOAT, {"2"});
  o.output("z");
  EXPECT_EQ(error_of([&] { o.import(); }), "onnx: graph output 'z' is not produced by any node, input or initializer");
}

TEST(OnnxImporter, UnsortedGraphsImportAndCyclesFail) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"2"});
  m.node("TestIdentity", {"b"}, {"c"});
  m.node("TestIdentity", {"a"}, {"b"});
  m.node("TestIdentity", {"x"}, {"a"});
  m.output("c");
  graph::IRModule mod = m.import();
  EXPECT_TRUE(main_of(mod).result().same_as(main_of(mod).params()[0]));

  Model c;
  c.input("x", TensorProto::FLOAT, {"2"});
  c.node("TestIdentity", {"q"}, {"p"}, "p");
  c.node("TestIdentity", {"p"}, {"q"}, "q");
  c.output("p");
  EXPECT_EQ(error_of([&] { c.import(); }),
            "onnx: the graph has a cycle: node 'q' (TestIdentity) -> node 'p' (TestIdentity) -> node 'q' (TestIdentity)");
}

TEST(OnnxImporter, FileAndBytesOverloads) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"N", "3"});
  m.node("TestIdentity", {"x"}, {"y"});
  m.output("y");
  testing::TempDir dir;
  testing::write_file(dir / "m.onnx", testing::serialize(m.proto));
  EXPECT_EQ(graph::to_string(from_onnx_file(dir / "m.onnx").main().result().type()), "Tensor[(N, 3), float32]");
  EXPECT_EQ(graph::to_string(from_onnx_bytes(testing::serialize(m.proto)).main().result().type()), "Tensor[(N, 3), float32]");
  ErrorKind kind{};
  EXPECT_FALSE(error_of([&] { from_onnx_bytes(testing::random_bytes(64)); }, &kind).empty());
  EXPECT_EQ(kind, ErrorKind::kValue);
}

TEST(OnnxImporter, HugeDimsAreValueErrors) {
  Model m;
  m.input("x", TensorProto::FLOAT, {"4294967296"});
  m.output("x");
  ErrorKind kind{};
  EXPECT_EQ(error_of([&] { m.import(); }, &kind).rfind("onnx: input 'x' dim 0: ", 0), 0u);
  EXPECT_EQ(kind, ErrorKind::kValue);
}

}  // namespace
}  // namespace anvil::frontend::onnx
