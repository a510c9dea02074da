// The nn converters' N-d and multi-output forms end to end: small ONNX models built in C++,
// imported, compiled for llvm and run by the VM, against naive double-precision references on
// random inputs (seed printed): 3-d MaxPool/AveragePool and global pools (pads, strides, dilations, ceil_mode,
// count_include_pad), MaxPool's Indices output (both storage orders), MaxPool of integers,
// BatchNormalization's training mode, 3-d ConvTranspose and output_shape past the natural size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

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

constexpr uint32_t kSeed = 20261211;

struct Model : testing::ModelBuilder {
  explicit Model(int64_t opset) : ModelBuilder(opset, "run") {}
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

Function compiled_main(const Model& m) {
  register_runtime_functions();
  graph::IRModule mod = from_onnx(m.proto);
  vm::Executable exe = pipeline::compile(mod, Target::parse("llvm"));
  static std::vector<vm::VirtualMachine> keep;  // the VM outlives the returned function
  keep.push_back(vm::VirtualMachine::create(exe.as_module()));
  return keep.back()["main"];
}

struct Pool3d {
  std::vector<int64_t> k, s, d, pads;  // pads: begins then ends
  bool ceil = false, include_pad = false;
};

// ONNX's output size of one axis: floor or ceil of the room over the stride, plus one; with
// ceil_mode a last window that would start in the end padding is dropped.
int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d, int64_t lo, int64_t hi, bool ceil) {
  int64_t room = in + lo + hi - (d * (k - 1) + 1);
  int64_t out = (ceil ? (room + s - 1) / s : room / s) + 1;
  if (ceil && (out - 1) * s >= in + lo) --out;
  return out;
}

// The naive 3-d pool of x [N, C, D, H, W] (float32 values read as doubles).
std::vector<double> pool3d_ref(const std::vector<double>& x, const std::vector<int64_t>& shape, const Pool3d& p,
                               bool is_max, std::vector<int64_t>* out_shape) {
  const int64_t N = shape[0], C = shape[1];
  int64_t in[3] = {shape[2], shape[3], shape[4]}, out[3];
  for (int a = 0; a < 3; ++a) out[a] = out_size(in[a], p.k[a], p.s[a], p.d[a], p.pads[a], p.pads[a + 3], p.ceil);
  *out_shape = {N, C, out[0], out[1], out[2]};
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t o0 = 0; o0 < out[0]; ++o0)
        for (int64_t o1 = 0; o1 < out[1]; ++o1)
          for (int64_t o2 = 0; o2 < out[2]; ++o2) {
            int64_t o[3] = {o0, o1, o2};
            double best = -std::numeric_limits<double>::infinity(), sum = 0;
            int64_t inside = 0, padded = 0;
            for (int64_t r0 = 0; r0 < p.k[0]; ++r0)
              for (int64_t r1 = 0; r1 < p.k[1]; ++r1)
                for (int64_t r2 = 0; r2 < p.k[2]; ++r2) {
                  int64_t r[3] = {r0, r1, r2}, i[3];
                  bool in_x = true, in_padded = true;
                  for (int a = 0; a < 3; ++a) {
                    i[a] = o[a] * p.s[a] + r[a] * p.d[a] - p.pads[a];
                    in_x = in_x && i[a] >= 0 && i[a] < in[a];
                    in_padded = in_padded && i[a] >= -p.pads[a] && i[a] < in[a] + p.pads[a + 3];
                  }
                  padded += in_padded;
                  if (!in_x) continue;
                  double v = x[(((n * C + c) * in[0] + i[0]) * in[1] + i[1]) * in[2] + i[2]];
                  best = std::max(best, v), sum += v, ++inside;
                }
            y.push_back(is_max ? best : sum / double(std::max<int64_t>(p.include_pad ? padded : inside, 1)));
          }
  return y;
}

void check_pool3d(bool is_max, const std::vector<int64_t>& shape, const Pool3d& p, std::mt19937& rng) {
  Model m(22);
  set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT,
                  {std::to_string(shape[0]), std::to_string(shape[1]), std::to_string(shape[2]),
                   std::to_string(shape[3]), std::to_string(shape[4])});
  NodeProto* n = m.node(is_max ? "MaxPool" : "AveragePool", {"x"}, {"y"});
  attr_ints(n, "kernel_shape", p.k);
  attr_ints(n, "strides", p.s);
  attr_ints(n, "dilations", p.d);
  attr_ints(n, "pads", p.pads);
  attr_int(n, "ceil_mode", p.ceil);
  if (!is_max) attr_int(n, "count_include_pad", p.include_pad);
  m.g->add_output()->set_name("y");
  Function main = compiled_main(m);
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  std::vector<double> x = random_values(numel, rng, -2, 2);
  for (double& v : x) v = double(float(v));
  std::vector<int64_t> want_shape;
  std::vector<double> want = pool3d_ref(x, shape, p, is_max, &want_shape);
  Tensor y = main(make_tensor(shape, DataType::float32(), x)).as_tensor();
  ASSERT_EQ(y.shape(), want_shape);
  for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(get(y, i), want[size_t(i)], 1e-5) << "element " << i;
}

TEST(OnnxRunNn, Pool3dAgainstANaiveReference) {
  std::printf("onnx nn run seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  const std::vector<int64_t> shape = {2, 3, 7, 6, 9};
  std::vector<Pool3d> cases = {
      {{2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0, 0, 0, 0}},
      {{3, 2, 3}, {2, 1, 2}, {1, 2, 1}, {1, 0, 1, 1, 1, 0}},
      {{2, 3, 2}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1, 1, 0, 1}, true},
      {{3, 3, 2}, {3, 2, 2}, {1, 1, 2}, {1, 1, 0, 0, 1, 1}, true, true},
      {{2, 2, 3}, {1, 3, 2}, {3, 1, 1}, {1, 1, 1, 1, 1, 1}, false, true},
  };
  for (bool is_max : {true, false}) {
    for (size_t c = 0; c < cases.size(); ++c) {
      SCOPED_TRACE(std::string(is_max ? "max" : "avg") + " case " + std::to_string(c));
      check_pool3d(is_max, shape, cases[c], rng);
    }
  }
}

TEST(OnnxRunNn, GlobalPoolsOf3dData) {
  std::mt19937 rng(kSeed + 4);
  for (bool is_max : {true, false}) {
    Model m(22);
    set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"N", "3", "4", "5", "6"});
    m.node(is_max ? "GlobalMaxPool" : "GlobalAveragePool", {"x"}, {"y"});
    m.g->add_output()->set_name("y");
    Function main = compiled_main(m);
    std::vector<double> x = random_values(2 * 3 * 120, rng, -2, 2);
    for (double& v : x) v = double(float(v));
    Tensor y = main(make_tensor({2, 3, 4, 5, 6}, DataType::float32(), x)).as_tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 3, 1, 1, 1}));
    for (int64_t p = 0; p < 6; ++p) {
      double best = -1e30, sum = 0;
      for (int64_t i = 0; i < 120; ++i) best = std::max(best, x[p * 120 + i]), sum += x[p * 120 + i];
      EXPECT_NEAR(get(y, p), is_max ? best : sum / 120, 1e-5) << (is_max ? "max" : "avg") << " plane " << p;
    }
  }
}

TEST(OnnxRunNn, MaxPoolIndicesAndIntegerMaxPool) {
  // Y and Indices of a 2-d MaxPool (pads, strides, dilations; row- and column-major indices) and
  // an int8 MaxPool, against a naive reference.
  std::mt19937 rng(kSeed + 1);
  const int64_t N = 2, C = 3, H = 7, W = 8;
  const std::vector<int64_t> k = {3, 2}, st = {2, 1}, dil = {1, 2}, pads = {1, 0, 1, 1};
  const int64_t OH = out_size(H, k[0], st[0], dil[0], pads[0], pads[2], false);
  const int64_t OW = out_size(W, k[1], st[1], dil[1], pads[1], pads[3], false);
  for (int64_t order : {0, 1}) {
    SCOPED_TRACE("storage_order " + std::to_string(order));
    Model m(22);
    set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"2", "3", "7", "8"});
    NodeProto* n = m.node("MaxPool", {"x"}, {"y", "i"});
    attr_ints(n, "kernel_shape", k);
    attr_ints(n, "strides", st);
    attr_ints(n, "dilations", dil);
    attr_ints(n, "pads", pads);
    attr_int(n, "storage_order", order);
    m.g->add_output()->set_name("y");
    m.g->add_output()->set_name("i");
    Function main = compiled_main(m);
    std::vector<double> x = random_values(N * C * H * W, rng, -4, 4, true);  // integers: ties happen
    Value res = main(make_tensor({N, C, H, W}, DataType::float32(), x));
    const std::vector<Value>& out = res.as_array();
    Tensor y = out[0].as_tensor(), idx = out[1].as_tensor();
    ASSERT_EQ(idx.shape(), (std::vector<int64_t>{N, C, OH, OW}));
    ASSERT_EQ(idx.dtype(), DataType::int64());
    for (int64_t p = 0; p < N * C; ++p)
      for (int64_t oy = 0; oy < OH; ++oy)
        for (int64_t ox = 0; ox < OW; ++ox) {
          double best = -1e30;
          int64_t at = -1;  // the first maximum in row-major order
          for (int64_t ry = 0; ry < k[0]; ++ry)
            for (int64_t rx = 0; rx < k[1]; ++rx) {
              int64_t iy = oy * st[0] + ry * dil[0] - pads[0], ix = ox * st[1] + rx * dil[1] - pads[1];
              if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
              double v = x[(p * H + iy) * W + ix];
              if (v > best) best = v, at = order == 0 ? (p * H + iy) * W + ix : (p * W + ix) * H + iy;
            }
          int64_t o = (p * OH + oy) * OW + ox;
          ASSERT_EQ(get(y, o), best) << "output " << o;
          ASSERT_EQ(get(idx, o), double(at)) << "output " << o;
        }
  }
  Model m(22);
  set_tensor_type(m.g->add_input(), "x", TensorProto::INT8, {"1", "2", "5", "5"});
  NodeProto* n = m.node("MaxPool", {"x"}, {"y"});
  attr_ints(n, "kernel_shape", {2, 2});
  attr_ints(n, "pads", {1, 1, 1, 1});
  m.g->add_output()->set_name("y");
  Function main = compiled_main(m);
  std::vector<double> x = random_values(50, rng, -128, 127, true);
  Tensor y = main(make_tensor({1, 2, 5, 5}, DataType::int8(), x)).as_tensor();
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 6, 6}));
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t oy = 0; oy < 6; ++oy)
      for (int64_t ox = 0; ox < 6; ++ox) {
        double best = -1e30;
        for (int64_t iy = oy - 1; iy <= oy; ++iy)
          for (int64_t ix = ox - 1; ix <= ox; ++ix)
            if (iy >= 0 && iy < 5 && ix >= 0 && ix < 5) best = std::max(best, x[(p * 5 + iy) * 5 + ix]);
        ASSERT_EQ(get(y, (p * 6 + oy) * 6 + ox), best);
      }
}

TEST(OnnxRunNn, BatchNormalizationTrainingMode) {
  // Y from the batch's mean and population variance over (N, H, W); the running statistics
  // blended with momentum. Against a naive double reference.
  std::mt19937 rng(kSeed + 2);
  const int64_t N = 3, C = 4, L = 5;
  Model m(15);
  set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"3", "4", "5"});
  for (const char* name : {"s", "b", "mean", "var"}) set_tensor_type(m.g->add_input(), name, TensorProto::FLOAT, {"4"});
  NodeProto* n = m.node("BatchNormalization", {"x", "s", "b", "mean", "var"}, {"y", "rm", "rv"});
  attr_int(n, "training_mode", 1);
  auto* mo = n->add_attribute();
  mo->set_name("momentum");
  mo->set_type(AttributeProto::FLOAT);
  mo->set_f(0.75f);
  for (const char* name : {"y", "rm", "rv"}) m.g->add_output()->set_name(name);
  Function main = compiled_main(m);
  std::vector<double> x = random_values(N * C * L, rng, -2, 2), sc = random_values(C, rng, 0.5, 1.5),
                      b = random_values(C, rng, -1, 1), mean = random_values(C, rng, -1, 1),
                      var = random_values(C, rng, 0.5, 2);
  for (std::vector<double>* v : {&x, &sc, &b, &mean, &var})
    for (double& e : *v) e = double(float(e));
  Value res = main(make_tensor({N, C, L}, DataType::float32(), x), make_tensor({C}, DataType::float32(), sc),
                   make_tensor({C}, DataType::float32(), b), make_tensor({C}, DataType::float32(), mean),
                   make_tensor({C}, DataType::float32(), var));
  const std::vector<Value>& out = res.as_array();
  Tensor y = out[0].as_tensor(), rm = out[1].as_tensor(), rv = out[2].as_tensor();
  for (int64_t c = 0; c < C; ++c) {
    double mu = 0, v = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t l = 0; l < L; ++l) mu += x[(i * C + c) * L + l] / double(N * L);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t l = 0; l < L; ++l) v += std::pow(x[(i * C + c) * L + l] - mu, 2) / double(N * L);
    EXPECT_NEAR(get(rm, c), mean[c] * 0.75 + mu * 0.25, 1e-5);
    EXPECT_NEAR(get(rv, c), var[c] * 0.75 + v * 0.25, 1e-5);
    for (int64_t i = 0; i < N; ++i)
      for (int64_t l = 0; l < L; ++l) {
        int64_t at = (i * C + c) * L + l;
        EXPECT_NEAR(get(y, at), (x[at] - mu) / std::sqrt(v + 1e-5) * sc[c] + b[c], 1e-4) << "element " << at;
      }
  }
}

// Transposed convolution by scattering: every input element times every weight tap adds to the
// output position it lands on (x [N, C, *in], w [C, O/g, *k]); the output has `out` spatial sizes.
std::vector<double> conv_transpose_ref(const std::vector<double>& x, const std::vector<int64_t>& xs, const std::vector<double>& w,
                                       const std::vector<int64_t>& ws, int64_t groups, const std::vector<int64_t>& st,
                                       const std::vector<int64_t>& pads_begin, const std::vector<int64_t>& dil,
                                       const std::vector<int64_t>& out) {
  const int64_t N = xs[0], C = xs[1], OG = ws[1], O = OG * groups, CG = C / groups;
  const size_t sd = out.size();
  int64_t in_n = 1, k_n = 1, out_n = 1;
  for (size_t a = 0; a < sd; ++a) in_n *= xs[2 + a], k_n *= ws[2 + a], out_n *= out[a];
  std::vector<double> y(size_t(N * O * out_n), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t i = 0; i < in_n; ++i)
        for (int64_t o = 0; o < OG; ++o)
          for (int64_t k = 0; k < k_n; ++k) {
            int64_t ri = i, rk = k, lin = 0;
            std::vector<int64_t> ii(sd), kk(sd);
            for (size_t a = sd; a-- > 0;) ii[a] = ri % xs[2 + a], ri /= xs[2 + a], kk[a] = rk % ws[2 + a], rk /= ws[2 + a];
            bool inside = true;
            for (size_t a = 0; a < sd; ++a) {
              int64_t p = ii[a] * st[a] - pads_begin[a] + kk[a] * dil[a];
              inside = inside && p >= 0 && p < out[a];
              lin = lin * out[a] + p;
            }
            if (!inside) continue;
            int64_t oc = (c / CG) * OG + o;
            y[size_t((n * O + oc) * out_n + lin)] += x[size_t((n * C + c) * in_n + i)] * w[size_t((c * OG + o) * k_n + k)];
          }
  return y;
}

TEST(OnnxRunNn, ConvTranspose3dAndAnOutputShapePastTheNaturalSize) {
  std::mt19937 rng(kSeed + 3);
  {
    // 3-d, 2 groups, strides, pads, dilations, output_padding.
    const std::vector<int64_t> xs = {2, 4, 3, 4, 3}, ws = {4, 3, 2, 3, 2}, st = {2, 1, 3}, dil = {1, 2, 1},
                               pads = {1, 0, 1, 0, 2, 1}, opad = {1, 0, 1};
    Model m(22);
    set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"2", "4", "3", "4", "3"});
    set_tensor_type(m.g->add_input(), "w", TensorProto::FLOAT, {"4", "3", "2", "3", "2"});
    NodeProto* n = m.node("ConvTranspose", {"x", "w"}, {"y"});
    attr_ints(n, "strides", st);
    attr_ints(n, "dilations", dil);
    attr_ints(n, "pads", pads);
    attr_ints(n, "output_padding", opad);
    attr_int(n, "group", 2);
    m.g->add_output()->set_name("y");
    Function main = compiled_main(m);
    std::vector<int64_t> out;
    for (int a = 0; a < 3; ++a) out.push_back((xs[2 + a] - 1) * st[a] + dil[a] * (ws[2 + a] - 1) + 1 + opad[a] - pads[a] - pads[a + 3]);
    std::vector<double> x = random_values(2 * 4 * 36, rng, -1, 1), w = random_values(4 * 3 * 12, rng, -1, 1);
    for (std::vector<double>* v : {&x, &w})
      for (double& e : *v) e = double(float(e));
    Tensor y = main(make_tensor(xs, DataType::float32(), x), make_tensor(ws, DataType::float32(), w)).as_tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 6, out[0], out[1], out[2]}));
    std::vector<double> want = conv_transpose_ref(x, xs, w, ws, 2, st, {pads[0], pads[1], pads[2]}, dil, out);
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(get(y, i), want[size_t(i)], 1e-5) << "element " << i;
  }
  {
    // output_shape one past the natural size: the reference's pads split the total -1 as 0 and -1.
    Model m(22);
    set_tensor_type(m.g->add_input(), "x", TensorProto::FLOAT, {"1", "2", "3", "3"});
    set_tensor_type(m.g->add_input(), "w", TensorProto::FLOAT, {"2", "2", "3", "3"});
    NodeProto* n = m.node("ConvTranspose", {"x", "w"}, {"y"});
    attr_ints(n, "strides", {3, 2});
    attr_ints(n, "output_shape", {10, 8});
    m.g->add_output()->set_name("y");
    Function main = compiled_main(m);
    std::vector<double> x = random_values(18, rng, -1, 1), w = random_values(36, rng, -1, 1);
    for (std::vector<double>* v : {&x, &w})
      for (double& e : *v) e = double(float(e));
    Tensor y = main(make_tensor({1, 2, 3, 3}, DataType::float32(), x), make_tensor({2, 2, 3, 3}, DataType::float32(), w)).as_tensor();
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 10, 8}));
    std::vector<double> want = conv_transpose_ref(x, {1, 2, 3, 3}, w, {2, 2, 3, 3}, 1, {3, 2}, {0, 0}, {1, 1}, {10, 8});
    for (int64_t i = 0; i < y.numel(); ++i) ASSERT_NEAR(get(y, i), want[size_t(i)], 1e-5) << "element " << i;
  }
}

}  // namespace
}  // namespace anvil::frontend::onnx
