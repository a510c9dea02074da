// The elementwise and reduce converters end to end: small ONNX models built in C++, imported,
// compiled by pipeline::compile for llvm and run by the VM at two batch sizes of a symbolic
// dim, against double-precision references (random inputs and weights, seed printed).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "anvil/frontend/onnx/importer.h"
#include "anvil/frontend/onnx/test_models.h"
#include "anvil/ops/op_test_util.h"
#include "anvil/pipeline/compile.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::frontend::onnx {
namespace {

using ops::testing::get;
using ops::testing::make_tensor;
using ops::testing::random_values;
using testing::set_tensor_type;

constexpr uint32_t kSeed = 20261205;

struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset) : ModelBuilder(opset, "run") {}
  void init_f32(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& v) {
    TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (double x : v) t->add_float_data(static_cast<float>(x));
  }
};

void attr_ints(NodeProto* n, const std::string& name, std::vector<int64_t> v, bool single = false) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(single ? AttributeProto::INT : AttributeProto::INTS);
  if (single) a->set_i(v[0]);
  else
    for (int64_t x : v) a->add_ints(x);
}

Function compiled_main(const Model& m) {
  register_runtime_functions();
  graph::IRModule mod = from_onnx(m.proto);
  vm::Executable exe = pipeline::compile(mod, Target::parse("llvm"));
  static std::vector<vm::VirtualMachine> keep;  // the VM outlives the returned function
  keep.push_back(vm::VirtualMachine::create(exe.as_module()));
  return keep.back()["main"];
}

TEST(OnnxRunElementwiseReduce, MeanOfSigmoidOfAffine) {
  std::printf("onnx run seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  Model m(17);
  set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"N", "37"});
  std::vector<double> w = random_values(37, rng, -1, 1), c = random_values(1, rng, -1, 1);
  m.init_f32("w", {37}, w);
  m.init_f32("c", {1}, c);
  m.node("Mul", {"x", "w"}, {"a"});
  m.node("Add", {"a", "c"}, {"b"});
  m.node("Sigmoid", {"b"}, {"s"});
  auto* r = m.node("ReduceMean", {"s"}, {"y"});
  attr_ints(r, "axes", {1});
  attr_ints(r, "keepdims", {0}, true);
  m.g->add_output()->set_name("y");
  Function main = compiled_main(m);
  for (int64_t batch : {3, 8}) {
    std::vector<double> x = random_values(batch * 37, rng, -2, 2);
    Tensor y = main(make_tensor({batch, 37}, DataType::float32(), x)).as_tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{batch}));
    for (int64_t i = 0; i < batch; ++i) {
      double want = 0;
      for (int64_t j = 0; j < 37; ++j) {
        double b = double(float(x[i * 37 + j])) * double(float(w[j])) + double(float(c[0]));
        want += 1 / (1 + std::exp(-b)) / 37;
      }
      EXPECT_NEAR(get(y, i), want, 1e-5) << "batch " << batch << " row " << i;
    }
  }
}

TEST(OnnxRunElementwiseReduce, WhereClipArgMax) {
  std::mt19937 rng(kSeed + 1);
  Model m(13);
  set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"N", "5"});
  m.init_f32("zero", {}, {0.0});
  m.init_f32("lo", {}, {-0.5});
  m.init_f32("hi", {}, {1.5});
  m.node("Greater", {"x", "zero"}, {"pos"});
  m.node("Neg", {"x"}, {"nx"});
  m.node("Where", {"pos", "x", "nx"}, {"ab"});         // |x|
  m.node("Sub", {"ab", "x"}, {"d"});                   // 0 or 2|x|
  m.node("Clip", {"d", "lo", "hi"}, {"cl"});
  auto* am = m.node("ArgMax", {"cl"}, {"y"});
  attr_ints(am, "axis", {0}, true);
  attr_ints(am, "keepdims", {0}, true);
  m.g->add_output()->set_name("y");
  Function main = compiled_main(m);
  for (int64_t batch : {4, 11}) {
    std::vector<double> x = random_values(batch * 5, rng, -1, 1);
    Tensor y = main(make_tensor({batch, 5}, DataType::float32(), x)).as_tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{5}));
    for (int64_t j = 0; j < 5; ++j) {
      int64_t best = 0;
      double bv = -1e30;
      for (int64_t i = 0; i < batch; ++i) {
        double v = float(x[i * 5 + j]);
        double cl = std::clamp(std::fabs(v) - v, -0.5, 1.5);
        if (cl > bv) bv = cl, best = i;
      }
      EXPECT_EQ(get(y, j), double(best)) << "batch " << batch << " column " << j;
    }
  }
}

}  // namespace
}  // namespace anvil::frontend::onnx
