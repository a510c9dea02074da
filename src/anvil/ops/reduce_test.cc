// Reduction kernels (sum, mean, max, min, prod, argmax, argmin, cumsum, topk) lowered through
// ops::lower_call, built for llvm and run on random inputs (seed printed) against naive double
// references: inner and outer axes (the vectorised schedule), all axes, keepdims on and off,
// a 37-long axis, a symbolic dim, float16 (accumulated in float32) and int32 data.
// Tolerance for float32 sums: 1e-5 * (1 + sum |x|).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>

#include "anvil/ops/op_test_util.h"

namespace anvil::ops {
namespace {

using namespace anvil::ops::testing;  // NOLINT(google-build-using-namespace)
using graph::AttrValue;
using graph::Attrs;
using graph::Type;

constexpr uint32_t kSeed = 20261204;

// Reference of a reduction over `axes` (sorted) of data of `shape`: for every output element
// (keepdims layout), the list of reduced values in order.
std::vector<std::vector<double>> groups(const std::vector<int64_t>& shape, const std::vector<int>& axes,
                                        const std::vector<double>& x) {
  std::vector<int64_t> out_shape = shape;
  for (int a : axes) out_shape[a] = 1;
  std::vector<std::vector<double>> g(static_cast<size_t>(numel(out_shape)));
  for (int64_t i = 0; i < numel(shape); ++i) {
    int64_t rest = i, o = 0, stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t coord = rest % shape[d];
      rest /= shape[d];
      if (out_shape[d] != 1) o += coord * stride;
      stride *= out_shape[d];
    }
    g[o].push_back(x[i]);
  }
  return g;
}

using Combine = std::function<double(const std::vector<double>&)>;

struct ReduceCheck {
  std::string op;
  Combine ref;
  double tol;  // relative to 1 + sum |x| of the group
};

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

class ReduceKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { std::printf("reduce kernels seed %u\n", kSeed); }
  std::mt19937 rng{kSeed};

  void check(const ReduceCheck& rc, const Type& type, const std::vector<int64_t>& shape, std::vector<int> axes,
             bool keepdims, const std::vector<double>& x, const std::map<std::string, int64_t>& dims = {}) {
    SCOPED_TRACE(::testing::Message() << rc.op << " of " << to_string(type) << " keepdims " << keepdims << " axes "
                                      << ::testing::PrintToString(axes));
    std::vector<int64_t> ax(axes.begin(), axes.end());
    Attrs attrs = {{"keepdims", keepdims ? 1 : 0}};
    if (!ax.empty()) attrs["axes"] = AttrValue::ints(ax);
    if (axes.empty())
      for (int i = 0; i < static_cast<int>(shape.size()); ++i) axes.push_back(i);
    Kernel k = build_kernel(rc.op, {type}, attrs);
    Tensor in = make_tensor(shape, type.dtype(), x);
    std::vector<int64_t> out_shape;
    for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
      bool r = std::find(axes.begin(), axes.end(), d) != axes.end();
      if (!r) out_shape.push_back(shape[d]);
      else if (keepdims) out_shape.push_back(1);
    }
    Tensor out = run_kernel(k, {in}, {out_shape}, dims)[0];
    std::vector<std::vector<double>> g = groups(shape, axes, values_of(in));
    ASSERT_EQ(static_cast<int64_t>(g.size()), out.numel());
    int bad = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      double mag = 0;
      for (double v : g[i]) mag += std::fabs(v);
      double want = rc.ref(g[i]), got = get(out, static_cast<int64_t>(i));
      if (!(std::fabs(got - want) <= rc.tol * (1 + mag)) && ++bad <= 5)
        ADD_FAILURE() << "element " << i << " = " << got << ", want " << want;
    }
    EXPECT_EQ(bad, 0);
  }
};

std::vector<ReduceCheck> float_checks() {
  return {
      {"sum", sum_of, 1e-5},
      {"mean", [](const std::vector<double>& v) { return sum_of(v) / double(v.size()); }, 1e-5},
      {"max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }, 0},
      {"min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); }, 0},
  };
}

TEST_F(ReduceKernels, FloatReductionsOverInnerOuterAndAllAxes) {
  DataType f = DataType::float32();
  std::vector<int64_t> shape = {3, 37, 20};
  std::vector<double> x = random_values(numel(shape), rng, -1, 1);
  Type t = Type::tensor(shape, f);
  for (const ReduceCheck& rc : float_checks()) {
    check(rc, t, shape, {2}, true, x);     // innermost: serial reduction per output
    check(rc, t, shape, {1}, false, x);    // middle: vectorised over the last axis
    check(rc, t, shape, {0, 2}, true, x);  // two axes
    check(rc, t, shape, {}, false, x);     // everything: a 0-d result
  }
}

TEST_F(ReduceKernels, SymbolicDims) {
  ir::Var n = ir::size_var("n");
  DataType f = DataType::float32();
  std::vector<int64_t> shape = {5, 37};
  std::vector<double> x = random_values(numel(shape), rng, -1, 1);
  Type t = Type::tensor({ir::int_imm(5), n}, f);
  for (const ReduceCheck& rc : float_checks()) {
    check(rc, t, shape, {1}, true, x, {{"n", 37}});
    check(rc, t, shape, {0}, false, x, {{"n", 37}});
  }
}

TEST_F(ReduceKernels, ProdExactForSmallAndLogDomainForLarge) {
  DataType f = DataType::float32();
  ReduceCheck prod{"prod", [](const std::vector<double>& v) {
                     double p = 1;
                     for (double x : v) p *= x;
                     return p;
                   }, 1e-5};
  std::vector<int64_t> small = {4, 6};
  std::vector<double> xs = random_values(numel(small), rng, -2, 2);
  xs[7] = 0;  // a zero in one group
  check(prod, Type::tensor(small, f), small, {1}, false, xs);
  check(prod, Type::tensor(small, f), small, {0}, true, xs);
  ir::Var n = ir::size_var("n");
  std::vector<int64_t> large = {3, 70};  // 70 > the unrolled limit; symbolic too
  std::vector<double> xl = random_values(numel(large), rng, 0.6, 1.6);
  for (int i = 0; i < 70; i += 9) xl[i] = -xl[i];
  xl[140 + 3] = 0;
  check(prod, Type::tensor(large, f), large, {1}, true, xl);
  check(prod, Type::tensor({ir::int_imm(3), n}, f), large, {1}, false, xl, {{"n", 70}});
  std::vector<double> xi = random_values(numel(small), rng, -4, 5, true);
  check(prod, Type::tensor(small, DataType::int32()), small, {1}, false, xi);
}

TEST_F(ReduceKernels, IntegerAndFloat16Data) {
  std::vector<int64_t> shape = {6, 37};
  std::vector<double> xi = random_values(numel(shape), rng, -100, 100, true);
  Type ti = Type::tensor(shape, DataType::int32());
  for (const ReduceCheck& rc : float_checks()) {
    ReduceCheck exact = rc;
    exact.tol = 0;
    if (rc.op == "mean") exact.ref = [](const std::vector<double>& v) { return std::trunc(sum_of(v) / double(v.size())); };
    check(exact, ti, shape, {1}, false, xi);
    check(exact, ti, shape, {0}, true, xi);
  }
  std::vector<double> xh = random_values(numel(shape), rng, -1, 1);
  Type th = Type::tensor(shape, DataType::float16());
  for (const ReduceCheck& rc : float_checks()) {
    ReduceCheck half = rc;
    half.tol = 1e-3;  // one rounding of the float32 result to half
    check(half, th, shape, {1}, false, xh);
    check(half, th, shape, {0}, false, xh);
  }
}

TEST_F(ReduceKernels, ArgmaxArgminFirstAndLastIndex) {
  ir::Var n = ir::size_var("n");
  std::vector<int64_t> shape = {4, 37, 3};
  std::vector<double> x = random_values(numel(shape), rng, -4, 4, true);  // many ties
  Tensor in = make_tensor(shape, DataType::float32(), x);
  for (const char* op : {"argmax", "argmin"}) {
    for (int axis : {1, 2}) {
      for (int last : {0, 1}) {
        SCOPED_TRACE(::testing::Message() << op << " axis " << axis << " last " << last);
        Type t = Type::tensor({ir::int_imm(4), n, ir::int_imm(3)}, DataType::float32());
        Kernel k = build_kernel(op, {t}, {{"axis", axis}, {"keepdims", 0}, {"select_last_index", last}});
        std::vector<int64_t> out_shape = shape;
        out_shape.erase(out_shape.begin() + axis);
        Tensor out = run_kernel(k, {in}, {out_shape}, {{"n", 37}})[0];
        std::vector<std::vector<double>> g = groups(shape, {axis}, x);
        int bad = 0;
        for (size_t i = 0; i < g.size(); ++i) {
          int64_t best = 0;
          for (int64_t j = 1; j < static_cast<int64_t>(g[i].size()); ++j) {
            double a = g[i][j], b = g[i][best];
            bool better = std::string(op) == "argmax" ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
            if (better) best = j;
          }
          if (static_cast<int64_t>(get(out, static_cast<int64_t>(i))) != best && ++bad <= 5)
            ADD_FAILURE() << "element " << i << " = " << get(out, static_cast<int64_t>(i)) << ", want " << best;
        }
        EXPECT_EQ(bad, 0);
      }
    }
  }
}

// Short axes (3) take the quadratic form, constant ones of 16 or more the blocked scan: 37
// (blocks of 7, the last one padded), 1000 (blocks of 32, padded) and 1024 (exact).
TEST_F(ReduceKernels, CumsumForwardReverseExclusive) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{3, 37}, {2, 1000}, {1024, 3}}) {
    for (DataType dt : {DataType::float32(), DataType::int32()}) {  // int32: exact
      const int64_t rows = shape[0], cols = shape[1];
      const bool exact = dt == DataType::int32();
      std::vector<double> x =
          exact ? random_values(numel(shape), rng, -100, 100, true) : random_values(numel(shape), rng, -1, 1);
      Tensor in = make_tensor(shape, dt, x);
      for (int axis : {0, 1}) {
        for (int exclusive : {0, 1}) {
          for (int reverse : {0, 1}) {
            SCOPED_TRACE(::testing::Message()
                         << "shape " << rows << "x" << cols << (exact ? " int32" : " float32") << " axis " << axis
                         << " exclusive " << exclusive << " reverse " << reverse);
            Kernel k = build_kernel("cumsum", {Type::tensor(shape, dt)},
                                    {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
            Tensor out = run_kernel(k, {in}, {shape})[0];
            int bad = 0;
            const int64_t len = axis == 0 ? rows : cols;
            for (int64_t i = 0; i < rows; ++i) {
              for (int64_t j = 0; j < cols; ++j) {
                int64_t pos = axis == 0 ? i : j;
                double want = 0;
                for (int64_t q = 0; q < len; ++q) {
                  bool take = reverse ? (exclusive ? q > pos : q >= pos) : (exclusive ? q < pos : q <= pos);
                  if (take) want += x[axis == 0 ? q * cols + j : i * cols + q];
                }
                double got = get(out, i * cols + j);
                double tol = exact ? 0 : 1e-5 * (1 + static_cast<double>(len));
                if (!(std::fabs(got - want) <= tol) && ++bad <= 5)
                  ADD_FAILURE() << "[" << i << ", " << j << "] = " << got << ", want " << want;
              }
            }
            EXPECT_EQ(bad, 0);
          }
        }
      }
    }
  }
}

TEST_F(ReduceKernels, TopkSortedWithLowerIndexFirstOnTies) {
  ir::Var n = ir::size_var("n");
  std::vector<int64_t> shape = {3, 37};
  std::vector<double> x = random_values(numel(shape), rng, -6, 6, true);  // ties
  Tensor in = make_tensor(shape, DataType::float32(), x);
  // k 5 and 2 take the selection passes, k 35 (over kSelectTopkMax) the ranking.
  for (std::pair<int, int64_t> axis_k : {std::pair<int, int64_t>{1, 5}, {0, 2}, {1, 35}}) {
    const int axis = axis_k.first;
    const int64_t k = axis_k.second;
    for (int largest : {0, 1}) {
      int64_t len = shape[axis], other = shape[1 - axis];
      SCOPED_TRACE(::testing::Message() << "axis " << axis << " k " << k << " largest " << largest);
      Type t = Type::tensor({ir::int_imm(3), n}, DataType::float32());
      Kernel kn = build_kernel("topk", {t}, {{"k", k}, {"axis", axis}, {"largest", largest}});
      std::vector<int64_t> out_shape = shape;
      out_shape[axis] = k;
      std::vector<Tensor> outs = run_kernel(kn, {in}, {out_shape, out_shape}, {{"n", 37}});
      int bad = 0;
      for (int64_t o = 0; o < other; ++o) {
        auto at = [&](int64_t j) { return axis == 1 ? o * 37 + j : j * 37 + o; };
        auto out_at = [&](int64_t j) { return axis == 1 ? o * k + j : j * 37 + o; };
        std::vector<int64_t> order(static_cast<size_t>(len));
        for (int64_t j = 0; j < len; ++j) order[j] = j;
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return largest ? x[at(a)] > x[at(b)] : x[at(a)] < x[at(b)]; });
        for (int64_t j = 0; j < k; ++j) {
          double v = get(outs[0], out_at(j)), idx = get(outs[1], out_at(j));
          if ((v != x[at(order[j])] || idx != order[j]) && ++bad <= 5)
            ADD_FAILURE() << "row " << o << " rank " << j << ": " << v << " at " << idx << ", want " << x[at(order[j])]
                          << " at " << order[j];
        }
      }
      EXPECT_EQ(bad, 0);
    }
  }
}

}  // namespace
}  // namespace anvil::ops
