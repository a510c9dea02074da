// Binary elementwise kernels, where, cast and clip on integers: numpy broadcasting on static
// shapes with a 37-wide axis and on symbolic shapes (dims passed as trailing int32 scalars),
// integer semantics (truncating divide, python and C remainders, shifts), bool results,
// against double-precision references on random inputs (seed printed).
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
using V = std::vector<double>;
using Ref = std::function<double(const V&)>;

constexpr uint32_t kSeed = 20261203;

Type ts(const std::vector<int64_t>& shape, DataType dtype) { return Type::tensor(shape, dtype); }

// Runs op on inputs of concrete `shapes` with graph `types`; compares with ref elementwise.
void check(const std::string& op, const std::vector<std::vector<int64_t>>& shapes, const std::vector<Type>& types,
           const std::vector<V>& inputs, const Ref& ref, const Attrs& attrs = {},
           const std::map<std::string, int64_t>& dims = {}) {
  SCOPED_TRACE(::testing::Message() << op << " first input " << to_string(types[0]));
  Kernel k = build_kernel(op, types, attrs);
  std::vector<Tensor> ins;
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(make_tensor(shapes[i], types[i].dtype(), inputs[i]));
  std::vector<int64_t> out_shape = broadcast(shapes);
  Tensor out = run_kernel(k, ins, {out_shape}, dims)[0];
  bool is_float = k.out_type.dtype().is_float();
  int bad = 0;
  for (int64_t i = 0; i < numel(out_shape); ++i) {
    V args;
    for (size_t j = 0; j < inputs.size(); ++j) args.push_back(get(ins[j], broadcast_source(out_shape, shapes[j], i)));
    double want = ref(args), got = get(out, i);
    double tol = is_float ? 2e-6 + 2e-5 * std::fabs(want) : 0;
    if (!(std::fabs(got - want) <= tol) && ++bad <= 5) {
      std::string a;
      for (double x : args) a += std::to_string(x) + " ";
      ADD_FAILURE() << op << "(" << a << ") = " << got << ", want " << want << " at " << i;
    }
  }
  EXPECT_EQ(bad, 0);
}

class ElementwiseBinaryKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { std::printf("elementwise binary kernels seed %u\n", kSeed); }
  std::mt19937 rng{kSeed};
};

struct BinaryCase {
  const char* op;
  Ref ref;
  bool positive_rhs = false;  // divisors
};

TEST_F(ElementwiseBinaryKernels, FloatArithmeticAndComparisonsBroadcast) {
  std::vector<BinaryCase> cases = {
      {"add", [](const V& v) { return v[0] + v[1]; }},
      {"subtract", [](const V& v) { return v[0] - v[1]; }},
      {"multiply", [](const V& v) { return v[0] * v[1]; }},
      {"divide", [](const V& v) { return v[0] / v[1]; }, true},
      {"floor_divide", [](const V& v) { return std::floor(v[0] / v[1]); }, true},
      {"power", [](const V& v) { return std::pow(v[0], v[1]); }, true},
      {"maximum", [](const V& v) { return std::max(v[0], v[1]); }},
      {"minimum", [](const V& v) { return std::min(v[0], v[1]); }},
      {"equal", [](const V& v) { return double(v[0] == v[1]); }},
      {"not_equal", [](const V& v) { return double(v[0] != v[1]); }},
      {"less", [](const V& v) { return double(v[0] < v[1]); }},
      {"less_equal", [](const V& v) { return double(v[0] <= v[1]); }},
      {"greater", [](const V& v) { return double(v[0] > v[1]); }},
      {"greater_equal", [](const V& v) { return double(v[0] >= v[1]); }},
      {"prelu", [](const V& v) { return v[0] < 0 ? v[0] * v[1] : v[0]; }},
  };
  ir::Var n = ir::size_var("n"), m = ir::size_var("m");
  DataType f = DataType::float32();
  for (const BinaryCase& b : cases) {
    bool prelu = std::string(b.op) == "prelu";
    // Coarse values so that equal/less see ties; power gets a positive base.
    V x = random_values(4 * 37, rng, prelu ? -3 : 0.25, 3), y = random_values(37, rng, 0.25, 3);
    if (!b.positive_rhs && !prelu)
      for (double& v : x) v = std::round(v * 2 - 3) / 2;
    if (!b.positive_rhs)
      for (double& v : y) v = std::round(v * 2 - 3) / 2;
    check(b.op, {{4, 37}, {37}}, {ts({4, 37}, f), ts({37}, f)}, {x, y}, b.ref);
    if (prelu) continue;  // slope broadcasts to data only
    // Symbolic (n, 1) against (1, m): an outer-product broadcast.
    V xs(x.begin(), x.begin() + 4);
    check(b.op, {{4, 1}, {1, 37}}, {Type::tensor({n, ir::int_imm(1)}, f), Type::tensor({ir::int_imm(1), m}, f)}, {xs, y},
          b.ref, {}, {{"n", 4}, {"m", 37}});
  }
}

TEST_F(ElementwiseBinaryKernels, MaximumMinimumAndClipPropagateNaN) {
  DataType f = DataType::float32();
  V x = random_values(37, rng, -2, 2), y = random_values(37, rng, -2, 2);
  x[0] = NAN, y[1] = NAN, x[2] = NAN, y[2] = NAN, x[20] = NAN;
  auto nan_or = [](double (*g)(double, double)) {
    return [g](const V& v) { return std::isnan(v[0]) || std::isnan(v[1]) ? NAN : g(v[0], v[1]); };
  };
  auto near = [](const std::string& op, const V& got, const V& want) {
    for (size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))))
        ADD_FAILURE() << op << " element " << i << " = " << got[i] << ", want " << want[i];
  };
  for (const char* op : {"maximum", "minimum"}) {
    Ref ref = std::string(op) == "maximum" ? nan_or([](double a, double b) { return std::max(a, b); })
                                           : nan_or([](double a, double b) { return std::min(a, b); });
    Kernel k = build_kernel(op, {ts({37}, f), ts({37}, f)});
    Tensor tx = make_tensor({37}, f, x), ty = make_tensor({37}, f, y);
    Tensor out = run_kernel(k, {tx, ty}, {{37}})[0];
    V want, xs = values_of(tx), ys = values_of(ty);
    for (size_t i = 0; i < 37; ++i) want.push_back(ref({xs[i], ys[i]}));
    near(op, values_of(out), want);
  }
  Kernel k = build_kernel("clip", {ts({37}, f)}, {{"min", -1.0}, {"max", 1.0}});
  Tensor tx = make_tensor({37}, f, x);
  Tensor out = run_kernel(k, {tx}, {{37}})[0];
  V want;
  for (double v : values_of(tx)) want.push_back(std::isnan(v) ? NAN : std::clamp(v, -1.0, 1.0));
  near("clip", values_of(out), want);
}

TEST_F(ElementwiseBinaryKernels, IntegerSemantics) {
  DataType i32 = DataType::int32();
  V x = random_values(37, rng, -50, 50, true), y = random_values(37, rng, -7, 7, true);
  for (double& v : y)
    if (v == 0) v = 3;
  auto fdiv = [](const V& v) { return std::floor(v[0] / v[1]); };
  auto pymod = [](const V& v) { return v[0] - std::floor(v[0] / v[1]) * v[1]; };
  std::vector<std::pair<std::string, Ref>> cases = {
      {"add", [](const V& v) { return v[0] + v[1]; }},
      {"divide", [](const V& v) { return std::trunc(v[0] / v[1]); }},
      {"floor_divide", fdiv},
      {"mod", pymod},
      {"maximum", [](const V& v) { return std::max(v[0], v[1]); }},
      {"bitwise_and", [](const V& v) { return double(int32_t(v[0]) & int32_t(v[1])); }},
      {"bitwise_or", [](const V& v) { return double(int32_t(v[0]) | int32_t(v[1])); }},
      {"bitwise_xor", [](const V& v) { return double(int32_t(v[0]) ^ int32_t(v[1])); }},
      {"less", [](const V& v) { return double(v[0] < v[1]); }},
  };
  Type t = ts({37}, i32);
  for (auto& [op, ref] : cases) check(op, {{37}, {37}}, {t, t}, {x, y}, ref);
  check("mod", {{37}, {37}}, {t, t}, {x, y}, [](const V& v) { return std::fmod(v[0], v[1]); }, {{"fmod", 1}});
  V e = random_values(37, rng, 0, 5, true), b = random_values(37, rng, -6, 6, true);
  check("power", {{37}, {37}}, {t, t}, {b, e}, [](const V& v) { return std::pow(v[0], v[1]); });
  DataType u8 = DataType::uint8();
  Type tu = ts({37}, u8);
  V ux = random_values(37, rng, 0, 256, true), us = random_values(37, rng, 0, 8, true);
  check("left_shift", {{37}, {37}}, {tu, tu}, {ux, us}, [](const V& v) { return double(uint8_t(int(v[0]) << int(v[1]))); });
  check("right_shift", {{37}, {37}}, {tu, tu}, {ux, us}, [](const V& v) { return double(int(v[0]) >> int(v[1])); });
  check("bitwise_not", {{37}}, {t}, {x}, [](const V& v) { return double(~int32_t(v[0])); });
  check("negative", {{37}}, {t}, {x}, [](const V& v) { return -v[0]; });
  check("abs", {{37}}, {t}, {x}, [](const V& v) { return std::fabs(v[0]); });
  check("clip", {{37}}, {t}, {x}, [](const V& v) { return std::clamp(v[0], -10.0, 20.0); }, {{"min", -10.5}, {"max", 20.0}});
  check("clip", {{37}}, {tu}, {ux}, [](const V& v) { return std::min(v[0], 100.0); }, {{"min", -1e30}, {"max", 100.0}});
}

TEST_F(ElementwiseBinaryKernels, LogicalWhereAndCast) {
  ir::Var n = ir::size_var("n");
  DataType bt = DataType::boolean(), f = DataType::float32();
  V a = random_values(37, rng, 0, 2, true), b = random_values(37, rng, 0, 2, true);
  Type tb = ts({37}, bt);
  check("logical_and", {{37}, {37}}, {tb, tb}, {a, b}, [](const V& v) { return double(v[0] && v[1]); });
  check("logical_or", {{37}, {37}}, {tb, tb}, {a, b}, [](const V& v) { return double(v[0] || v[1]); });
  check("logical_xor", {{37}, {37}}, {tb, tb}, {a, b}, [](const V& v) { return double(v[0] != v[1]); });
  check("equal", {{37}, {37}}, {tb, tb}, {a, b}, [](const V& v) { return double(v[0] == v[1]); });
  check("logical_not", {{37}}, {tb}, {a}, [](const V& v) { return double(!v[0]); });
  V x = random_values(3 * 37, rng, -3, 3), y = random_values(1, rng, -3, 3);
  check("where", {{37}, {3, 37}, {1}}, {Type::tensor({n}, bt), Type::tensor({ir::int_imm(3), n}, f), ts({1}, f)},
        {a, x, y}, [](const V& v) { return v[0] ? v[1] : v[2]; }, {}, {{"n", 37}});
  x[0] = 0, x[1] = -0.0;
  Type tf = Type::tensor({n}, f);
  std::map<std::string, int64_t> dims = {{"n", 37}};
  V xf(x.begin(), x.begin() + 37);
  check("cast", {{37}}, {tf}, {xf}, [](const V& v) { return std::trunc(v[0]); }, {{"dtype", DataType::int32()}}, dims);
  check("cast", {{37}}, {tf}, {xf}, [](const V& v) { return double(v[0] != 0); }, {{"dtype", bt}}, dims);
  check("cast", {{37}}, {tf}, {xf}, [](const V& v) { return ir::round_to_half(v[0]); }, {{"dtype", DataType::float16()}},
        dims);
  check("cast", {{37}}, {Type::tensor({n}, bt)}, {a}, [](const V& v) { return v[0]; }, {{"dtype", f}}, dims);
  V xi = random_values(37, rng, -1000, 1000, true);
  check("cast", {{37}}, {Type::tensor({n}, DataType::int64())}, {xi}, [](const V& v) { return v[0]; },
        {{"dtype", DataType::float64()}}, dims);
  check("cast", {{37}}, {Type::tensor({n}, DataType::float16())}, {xf}, [](const V& v) { return ir::round_to_half(v[0]); },
        {{"dtype", f}}, dims);
}

}  // namespace
}  // namespace anvil::ops
