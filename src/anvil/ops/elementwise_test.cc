// Elementwise kernels: every operator lowered through ops::lower_call, built for llvm and run
// on random inputs (seed printed) against a double-precision reference, on a static shape of
// 37 elements per row (not a multiple of any vector width) and on symbolic shapes (the dims
// passed as trailing int32 arguments). Tolerance for float32: 2e-5 relative + 2e-6 absolute
// (one rounding of a libm-quality function); float16 data: the float32 result rounded to half.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "anvil/ops/op_test_util.h"

namespace anvil::ops {
namespace {

using namespace anvil::ops::testing;  // NOLINT(google-build-using-namespace)
using graph::Attrs;
using graph::Type;

constexpr uint32_t kSeed = 20261202;
using Ref = std::function<double(const std::vector<double>&)>;

struct Case {
  std::vector<std::vector<int64_t>> shapes;  // concrete input shapes
  std::vector<Type> types;                   // graph types (static or symbolic)
  std::map<std::string, int64_t> dims;
};

// Static types for concrete shapes.
Case static_case(const std::vector<std::vector<int64_t>>& shapes, const std::vector<DataType>& dtypes) {
  Case c{shapes, {}, {}};
  for (size_t i = 0; i < shapes.size(); ++i) c.types.push_back(Type::tensor(shapes[i], dtypes[i]));
  return c;
}

// Checks op on inputs drawn by `draw` against ref; returns the number of mismatches.
void check(const std::string& op, const Case& c, const std::vector<std::vector<double>>& inputs, const Ref& ref,
           const Attrs& attrs = {}, double rtol = 2e-5, double atol = 2e-6) {
  SCOPED_TRACE(::testing::Message() << op << " on " << c.types.size() << " inputs, first " << to_string(c.types[0]));
  Kernel k = build_kernel(op, c.types, attrs);
  std::vector<Tensor> ins;
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(make_tensor(c.shapes[i], c.types[i].dtype(), inputs[i]));
  std::vector<int64_t> out_shape = broadcast(c.shapes);
  Tensor out = run_kernel(k, ins, {out_shape}, c.dims)[0];
  DataType od = k.out_type.dtype();
  int bad = 0;
  for (int64_t i = 0; i < numel(out_shape); ++i) {
    std::vector<double> args;
    for (size_t j = 0; j < inputs.size(); ++j) args.push_back(get(ins[j], broadcast_source(out_shape, c.shapes[j], i)));
    double want = ref(args), got = get(out, i);
    if (od == DataType::float16()) want = ir::round_to_half(want);
    double tol = od.is_float() ? atol + rtol * std::fabs(want) : 0;
    if (od == DataType::float16()) tol = 1e-3 * (1 + std::fabs(want));
    bool same = (std::isnan(want) && std::isnan(got)) || std::fabs(got - want) <= tol || got == want;
    if (!same && ++bad <= 5) {
      std::string a;
      for (double x : args) a += std::to_string(x) + " ";
      ADD_FAILURE() << op << "(" << a << ") = " << got << ", want " << want << " at " << i;
    }
  }
  EXPECT_EQ(bad, 0);
}

class ElementwiseKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { std::printf("elementwise kernels seed %u\n", kSeed); }
  std::mt19937 rng{kSeed};
};

struct UnaryCase {
  const char* op;
  double lo, hi;
  Ref ref;
  Attrs attrs = {};
};

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x) { return std::log1p(std::exp(x)); }

std::vector<UnaryCase> float_unary_cases() {
  auto f = [](double (*g)(double)) { return [g](const std::vector<double>& v) { return g(v[0]); }; };
  return {
      {"exp", -3, 3, f(std::exp)},
      {"log", 0.05, 5, f(std::log)},
      {"sqrt", 0, 4, f(std::sqrt)},
      {"rsqrt", 0.1, 4, [](const std::vector<double>& v) { return 1 / std::sqrt(v[0]); }},
      {"sin", -4, 4, f(std::sin)},
      {"cos", -4, 4, f(std::cos)},
      {"tan", -1.2, 1.2, f(std::tan)},
      {"asin", -0.95, 0.95, f(std::asin)},
      {"acos", -0.95, 0.95, f(std::acos)},
      {"atan", -4, 4, f(std::atan)},
      {"sinh", -3, 3, f(std::sinh)},
      {"cosh", -3, 3, f(std::cosh)},
      {"asinh", -3, 3, f(std::asinh)},
      {"acosh", 1.05, 4, f(std::acosh)},
      {"atanh", -0.9, 0.9, f(std::atanh)},
      {"tanh", -3, 3, f(std::tanh)},
      {"sigmoid", -6, 6, f(sigmoid)},
      {"erf", -2.5, 2.5, f(std::erf)},
      {"floor", -4, 4, f(std::floor)},
      {"ceil", -4, 4, f(std::ceil)},
      {"trunc", -4, 4, f(std::trunc)},
      {"reciprocal", 0.2, 3, [](const std::vector<double>& v) { return 1 / v[0]; }},
      {"negative", -3, 3, [](const std::vector<double>& v) { return -v[0]; }},
      {"abs", -3, 3, f(std::fabs)},
      {"sign", -3, 3, [](const std::vector<double>& v) { return double((v[0] > 0) - (v[0] < 0)); }},
      {"relu", -3, 3, [](const std::vector<double>& v) { return std::max(v[0], 0.0); }},
      {"softplus", -20, 20, f(softplus)},
      {"softsign", -3, 3, [](const std::vector<double>& v) { return v[0] / (1 + std::fabs(v[0])); }},
      {"mish", -5, 5, [](const std::vector<double>& v) { return v[0] * std::tanh(softplus(v[0])); }},
      {"hard_swish", -5, 5,
       [](const std::vector<double>& v) { return v[0] * std::clamp(v[0] / 6 + 0.5, 0.0, 1.0); }},
      {"leaky_relu", -3, 3, [](const std::vector<double>& v) { return v[0] < 0 ? 0.1 * v[0] : v[0]; }, {{"alpha", 0.1}}},
      {"elu", -3, 3, [](const std::vector<double>& v) { return v[0] < 0 ? 0.7 * std::expm1(v[0]) : v[0]; },
       {{"alpha", 0.7}}},
      {"selu", -3, 3,
       [](const std::vector<double>& v) {
         return 1.0507009873554805 * (v[0] <= 0 ? 1.6732632423543772 * std::expm1(v[0]) : v[0]);
       }},
      {"celu", -3, 3,
       [](const std::vector<double>& v) { return std::max(0.0, v[0]) + std::min(0.0, 1.5 * std::expm1(v[0] / 1.5)); },
       {{"alpha", 1.5}}},
      {"hard_sigmoid", -5, 5, [](const std::vector<double>& v) { return std::clamp(0.3 * v[0] + 0.4, 0.0, 1.0); },
       {{"alpha", 0.3}, {"beta", 0.4}}},
      {"thresholded_relu", -3, 3, [](const std::vector<double>& v) { return v[0] > 0.5 ? v[0] : 0; }, {{"alpha", 0.5}}},
      {"gelu", -4, 4, [](const std::vector<double>& v) { return 0.5 * v[0] * (1 + std::erf(v[0] / std::sqrt(2.0))); }},
      {"gelu", -4, 4,
       [](const std::vector<double>& v) {
         double x = v[0];
         return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
       },
       {{"approximate", "tanh"}}},
      {"clip", -3, 3, [](const std::vector<double>& v) { return std::clamp(v[0], -1.0, 0.5); }, {{"min", -1.0}, {"max", 0.5}}},
      {"clip", -3, 3, [](const std::vector<double>& v) { return std::max(v[0], -1.0); }, {{"min", -1.0}}},
  };
}

TEST_F(ElementwiseKernels, FloatUnaryOnStaticAndSymbolicShapes) {
  ir::Var n = ir::size_var("n");
  for (const UnaryCase& u : float_unary_cases()) {
    std::vector<double> x = random_values(3 * 37, rng, u.lo, u.hi);
    check(u.op, static_case({{3, 37}}, {DataType::float32()}), {x}, u.ref, u.attrs);
    Case sym{{{3, 37}}, {Type::tensor({ir::int_imm(3), n}, DataType::float32())}, {{"n", 37}}};
    check(u.op, sym, {x}, u.ref, u.attrs);
  }
}

TEST_F(ElementwiseKernels, RoundIsHalfToEven) {
  std::vector<double> x = random_values(37, rng, -8, 8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::round(x[i] * 2) / 2;  // many exact halves
  x[0] = 0.5, x[1] = 1.5, x[2] = 2.5, x[3] = -0.5, x[4] = -2.5;
  check("round", static_case({{37}}, {DataType::float32()}), {x}, [](const std::vector<double>& v) {
    return std::nearbyint(v[0]);
  });
}

TEST_F(ElementwiseKernels, Float16ComputesInFloat32) {
  ir::Var n = ir::size_var("n");
  std::vector<double> x = random_values(37, rng, -3, 3), y = random_values(37, rng, -3, 3);
  Case c{{{37}}, {Type::tensor({n}, DataType::float16())}, {{"n", 37}}};
  check("exp", c, {x}, [](const std::vector<double>& v) { return std::exp(v[0]); });
  check("sigmoid", c, {x}, [](const std::vector<double>& v) { return sigmoid(v[0]); });
  check("add", static_case({{37}, {37}}, {DataType::float16(), DataType::float16()}), {x, y},
        [](const std::vector<double>& v) { return v[0] + v[1]; });
}

TEST_F(ElementwiseKernels, ClassificationGivesBool) {
  std::vector<double> x = random_values(37, rng, -3, 3);
  x[1] = NAN, x[5] = INFINITY, x[9] = -INFINITY, x[30] = NAN;
  Case c = static_case({{37}}, {DataType::float32()});
  check("isnan", c, {x}, [](const std::vector<double>& v) { return double(std::isnan(v[0])); });
  check("isfinite", c, {x}, [](const std::vector<double>& v) { return double(std::isfinite(v[0])); });
  check("isinf", c, {x}, [](const std::vector<double>& v) { return double(std::isinf(v[0])); });
  check("isinf", c, {x}, [](const std::vector<double>& v) { return double(std::isinf(v[0]) && v[0] < 0); },
        {{"detect_positive", 0}});
  check("sign", c, {x}, [](const std::vector<double>& v) {
    return std::isnan(v[0]) ? v[0] : double((v[0] > 0) - (v[0] < 0));
  });
}

}  // namespace
}  // namespace anvil::ops
