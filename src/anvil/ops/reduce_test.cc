// Reduction kernels (sum, mean, max, min, prod, argmax, argmin, cumsum, topk) lowered through
// ops::lower_call, built for llvm and run on random inputs (seed printed) against naive double
// references: inner and outer axes (the vectorised schedule), all axes, keepdims on and off,
// a 37-long axis, a symbolic dim, float16 (accumulated in float32) and int32 data.
// Tolerance for float32 sums: 1e-5 * (1 + sum |x|).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "anvil/base/error.h"
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

// cumsum's linear scan (ops/cpu/cumsum.h) against a double loop: every axis of 2-d and 3-d
// shapes, so the innermost axis (one scalar accumulator per row), an outer axis with an inner
// extent below a vector (3), of whole vectors plus a scalar rest (37, 40 = 16 + 16 + 5 / 2 x 16
// + 8 lanes on AVX-512), and a symbolic inner extent; exclusive and reverse; float32, float16
// (accumulated in float32), int32 and int64 (values near 1e12, exact: no narrower accumulator);
// float32 with all four flag combinations, the other dtypes plain and exclusive + reverse.
// Tolerances: float32 1e-5 * (1 + length), float16 half an ulp of the result plus that; ints 0.
TEST_F(ReduceKernels, CumsumForwardReverseExclusive) {
  ir::Var n = ir::size_var("n");
  struct Case {
    std::vector<int64_t> shape;
    bool symbolic_last;  // the last dim typed as the Var n
  };
  for (const Case& c : {Case{{3, 37}, false}, Case{{2, 1000}, false}, Case{{1024, 3}, false}, Case{{4, 5, 37}, false},
                        Case{{2, 70, 40}, false}, Case{{3, 37}, true}}) {
    const std::vector<int64_t>& shape = c.shape;
    const int nd = static_cast<int>(shape.size());
    for (DataType dt : {DataType::float32(), DataType::float16(), DataType::int32(), DataType::int64()}) {
      const bool exact = !dt.is_float(), half = dt == DataType::float16();
      if (c.symbolic_last && dt != DataType::float32()) continue;
      std::vector<double> x = dt == DataType::int64()   ? random_values(numel(shape), rng, -1e12, 1e12, true)
                              : exact || half           ? random_values(numel(shape), rng, -8, 8, true)
                                                        : random_values(numel(shape), rng, -1, 1);
      Tensor in = make_tensor(shape, dt, x);
      std::vector<ir::PrimExpr> dims;
      for (int64_t d : shape) dims.push_back(ir::int_imm(d));
      if (c.symbolic_last) dims.back() = n;
      for (int axis = 0; axis < nd; ++axis) {
        int64_t len = shape[axis], inner = 1;
        for (int d = axis + 1; d < nd; ++d) inner *= shape[d];
        for (int exclusive : {0, 1}) {
          for (int reverse : {0, 1}) {
            if (dt != DataType::float32() && exclusive != reverse) continue;  // the other dtypes: two of the four
            SCOPED_TRACE(::testing::Message() << "shape " << ::testing::PrintToString(shape) << " " << dt << " axis "
                                              << axis << " exclusive " << exclusive << " reverse " << reverse
                                              << (c.symbolic_last ? " symbolic" : ""));
            Kernel k = build_kernel("cumsum", {Type::tensor(dims, dt)},
                                    {{"axis", axis}, {"exclusive", exclusive}, {"reverse", reverse}});
            std::map<std::string, int64_t> vals;
            if (c.symbolic_last) vals["n"] = shape.back();
            Tensor out = run_kernel(k, {in}, {shape}, vals)[0];
            int bad = 0;
            for (int64_t e = 0; e < numel(shape); ++e) {
              int64_t pos = e / inner % len, base = e - pos * inner;
              double want = 0;
              for (int64_t q = 0; q < len; ++q) {
                bool take = reverse ? (exclusive ? q > pos : q >= pos) : (exclusive ? q < pos : q <= pos);
                if (take) want += x[base + q * inner];
              }
              double got = get(out, e);
              double tol = exact ? 0 : 1e-5 * (1 + static_cast<double>(len)) + (half ? std::fabs(want) / 2048 : 0);
              if (!(std::fabs(got - want) <= tol) && ++bad <= 5) ADD_FAILURE() << "[" << e << "] = " << got << ", want " << want;
            }
            EXPECT_EQ(bad, 0);
          }
        }
      }
    }
  }
}

// topk's heap kernel (ops/cpu/topk.h) against a stable sort (ties: lower index first) of the
// row: integer-valued data (many ties), k = 1, small k, k past the old limit of 32, k = n;
// rows shorter than a prefilter block, long ones (1000, 4096: the vector block maxima), one
// sorted the wrong way (every element enters the heap); the innermost axis, a middle one
// ([4, 300, 3], [2, 50, 19] axis 1: inner positions carried a vector at a time, k <= 64, plus
// the rest row by row) and the first; float32 (largest and smallest), float16,
// int32, int64 (one each); a symbolic axis length. Values and indices must match exactly.
TEST_F(ReduceKernels, TopkSortedWithLowerIndexFirstOnTies) {
  ir::Var n = ir::size_var("n");
  struct Case {
    std::vector<int64_t> shape;
    int axis;
    std::vector<int64_t> ks;
    bool symbolic_axis = false;
    bool ascending = false;  // rows sorted increasingly (the worst case for largest)
  };
  const std::vector<Case> cases = {
      {{3, 37}, 1, {1, 5, 35, 37}, true}, {{3, 37}, 0, {1, 2, 3}},          {{2, 1000}, 1, {1, 10, 100, 1000}},
      {{4, 300, 3}, 1, {1, 7, 300}},      {{1, 4096}, 1, {100}, false, true}, {{5, 64}, 1, {33}},
      {{2, 50, 19}, 1, {1, 6, 50}},       {{40, 21}, 0, {3, 40}}};
  for (const Case& c : cases) {
    const std::vector<int64_t>& shape = c.shape;
    const int nd = static_cast<int>(shape.size()), axis = c.axis;
    int64_t len = shape[axis], inner = 1;
    for (int d = axis + 1; d < nd; ++d) inner *= shape[d];
    for (DataType dt : {DataType::float32(), DataType::float16(), DataType::int32(), DataType::int64()}) {
      if ((c.symbolic_axis || c.ascending) && dt != DataType::float32()) continue;
      std::vector<double> x = random_values(numel(shape), rng, -20, 20, true);  // ties
      if (c.ascending) std::sort(x.begin(), x.end());
      if (dt == DataType::float32() && !c.ascending)
        for (size_t q = 0; q < x.size(); q += 3) x[q] += 0.25 * static_cast<double>(q % 7);  // not only integers
      Tensor in = make_tensor(shape, dt, x);
      std::vector<ir::PrimExpr> dims;
      for (int64_t d : shape) dims.push_back(ir::int_imm(d));
      if (c.symbolic_axis) dims[axis] = n;
      for (int64_t k : c.ks) {
        for (int largest : {0, 1}) {
          // float32 both ways, the other dtypes one each (float16 and int64 smallest, int32 largest).
          if (dt != DataType::float32() && largest != (dt == DataType::int32() ? 1 : 0)) continue;
          SCOPED_TRACE(::testing::Message() << "shape " << ::testing::PrintToString(shape) << " " << dt << " axis "
                                            << axis << " k " << k << " largest " << largest);
          Kernel kn = build_kernel("topk", {Type::tensor(dims, dt)}, {{"k", k}, {"axis", axis}, {"largest", largest}});
          std::vector<int64_t> out_shape = shape;
          out_shape[axis] = k;
          std::map<std::string, int64_t> vals;
          if (c.symbolic_axis) vals["n"] = len;
          std::vector<Tensor> outs = run_kernel(kn, {in}, {out_shape, out_shape}, vals);
          int bad = 0;
          for (int64_t r = 0; r < numel(shape) / len; ++r) {
            int64_t o = r / inner, i = r % inner;
            auto at = [&](int64_t j) { return (o * len + j) * inner + i; };
            auto out_at = [&](int64_t j) { return (o * k + j) * inner + i; };
            std::vector<int64_t> order(static_cast<size_t>(len));
            for (int64_t j = 0; j < len; ++j) order[j] = j;
            std::stable_sort(order.begin(), order.end(),
                             [&](int64_t a, int64_t b) { return largest ? x[at(a)] > x[at(b)] : x[at(a)] < x[at(b)]; });
            for (int64_t j = 0; j < k; ++j) {
              double v = get(outs[0], out_at(j)), idx = get(outs[1], out_at(j));
              if ((v != x[at(order[j])] || idx != order[j]) && ++bad <= 5)
                ADD_FAILURE() << "row " << r << " rank " << j << ": " << v << " at " << idx << ", want "
                              << x[at(order[j])] << " at " << order[j];
            }
          }
          EXPECT_EQ(bad, 0);
        }
      }
    }
  }
}

// A run-time axis length below k fails before the kernel reads past the row.
TEST_F(ReduceKernels, TopkRejectsAnAxisShorterThanK) {
  ir::Var n = ir::size_var("n");
  Kernel kn = build_kernel("topk", {Type::tensor({ir::int_imm(2), n}, DataType::float32())}, {{"k", int64_t{5}}});
  Tensor in = make_tensor({2, 4}, DataType::float32(), std::vector<double>(8, 1.0));
  try {
    run_kernel(kn, {in}, {{2, 5}, {2, 5}}, {{"n", 4}});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("topk: k = 5 is larger than the axis length 4"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace anvil::ops
