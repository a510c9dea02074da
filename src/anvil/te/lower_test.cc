// Lowering of plain computations: elementwise, broadcast, reductions, symbolic shapes.
#include "anvil/te/lower.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/te/reduction.h"
#include "anvil/te/te_test_util.h"

namespace anvil::te {
namespace {

using namespace anvil::te::testing;

TEST(TeLower, ElementwiseAddRunsAndPrintsOneLoopNest) {
  Tensor A = placeholder({4, 6}, DataType::float32(), "A");
  Tensor B = placeholder({4, 6}, DataType::float32(), "B");
  Tensor C = compute(
      {4, 6}, [&](Var i, Var j) { return A(i, j) + B(i, j); }, "C");
  Schedule s = create_schedule({C});
  tir::PrimFunc f = lower(s, {A, B, C}, "add");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("for i in range(0, 4):"), std::string::npos) << text;
  EXPECT_NE(text.find("C[i, j] = A[i, j] + B[i, j]"), std::string::npos) << text;
  HostTensor a({4, 6}), b({4, 6}), c({4, 6});
  fill_random(a, kSeed);
  fill_random(b, kSeed + 1);
  run(f, {a.ptr(), b.ptr(), c.ptr()});
  std::vector<double> want(a.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = double(a[i]) + double(b[i]);
  expect_close(c, want);
}

TEST(TeLower, SumReductionInitialisesThenAccumulates) {
  Tensor A = placeholder({5, 7}, DataType::float32(), "A");
  IterVar k = reduce_axis(0, 7, "k");
  Tensor B = compute(
      {5}, [&](Var i) { return sum(A(i, k), {k}); }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B}, "rowsum");
  std::string text = tir::to_string(f);
  EXPECT_NE(text.find("B[i] = 0.0f"), std::string::npos) << text;
  EXPECT_NE(text.find("B[i] = B[i] + A[i, k]"), std::string::npos) << text;
  HostTensor a({5, 7}), b({5}, 42.0f);
  fill_random(a, kSeed);
  run(f, {a.ptr(), b.ptr()});
  std::vector<double> want(5, 0.0);
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 7; ++j) want[i] += a.at({i, j});
  expect_close(b, want);
}

TEST(TeLower, AxisNamesAndAxisLists) {
  Tensor A = placeholder({2, 3, 4}, DataType::float32(), "A");
  Tensor B = compute({2, 3, 4}, [&](Var a, Var b, Var c) { return A(a, b, c); }, "B");
  EXPECT_EQ(B.axis().size(), 3u);
  EXPECT_EQ(B.axis(2)->name(), "i2");
  Tensor C = compute({2, 3}, [&](Var r, Var c) { return A(r, c, 0); }, "C", {"row", "col"});
  Schedule s = create_schedule({C});
  std::string text = tir::to_string(lower(s, {A, C}, "names"));
  EXPECT_NE(text.find("for row in range(0, 2):"), std::string::npos) << text;
  EXPECT_THROW(compute({2}, [&](Var r) { return A(r, 0, 0); }, "D", {"x", "y"}), Error);
}

TEST(TeLower, ScalarOutputTotalSum) {
  Tensor A = placeholder({3, 4}, DataType::float32(), "A");
  IterVar r = reduce_axis(0, 3, "r"), c = reduce_axis(0, 4, "c");
  Tensor T = compute(
      {},
      [&](const std::vector<Var>&) {
        return sum(A(r, c), {r, c});
      },
      "T");
  Schedule s = create_schedule({T});
  auto [co, ci] = s[T].split(c, 3);
  tir::PrimFunc f = lower(s, {A, T}, "total");
  HostTensor a({3, 4}), t({});
  fill_random(a, kSeed);
  run(f, {a.ptr(), t.ptr()});
  double want = 0;
  for (size_t i = 0; i < a.size(); ++i) want += a[i];
  expect_close(t, {want});
}

// A 0-d stage read by another (a full reduction with a fused epilogue) is allocated as one
// element: TIR's Allocate takes at least one extent.
TEST(TeLower, ZeroDimIntermediateStageIsOneElement) {
  Tensor A = placeholder({3, 4}, DataType::float32(), "A");
  IterVar r = reduce_axis(0, 3, "r"), c = reduce_axis(0, 4, "c");
  Tensor T = compute({}, [&](const std::vector<Var>&) { return sum(A(r, c), {r, c}); }, "T");
  Tensor U = compute({}, [&](const std::vector<Var>&) { return T(std::vector<PrimExpr>{}) * 2.0f; }, "U");
  Schedule s = create_schedule({U});
  tir::PrimFunc f = lower(s, {A, U}, "twice_total");
  const std::string text = tir::to_string(f);
  EXPECT_NE(text.find("allocate(float32, [1]"), std::string::npos) << text;
  HostTensor a({3, 4}), u({});
  fill_random(a, kSeed);
  run(f, {a.ptr(), u.ptr()});
  double want = 0;
  for (size_t i = 0; i < a.size(); ++i) want += a[i];
  expect_close(u, {2 * want});
}

TEST(TeLower, VectorLambdaComputeOverThreeDimensions) {
  Tensor A = placeholder({2, 3, 4}, DataType::float32(), "A");
  Tensor B = compute(
      {4, 3, 2}, [&](const std::vector<Var>& v) { return A(v[2], v[1], v[0]) - 1.0f; }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B}, "transpose");
  HostTensor a({2, 3, 4}), b({4, 3, 2});
  fill_random(a, kSeed);
  run(f, {a.ptr(), b.ptr()});
  std::vector<double> want(24);
  for (int x = 0; x < 4; ++x)
    for (int y = 0; y < 3; ++y)
      for (int z = 0; z < 2; ++z) want[(x * 3 + y) * 2 + z] = double(a.at({z, y, x})) - 1.0;
  expect_close(b, want);
}

TEST(TeLower, Int32MaxReductionStartsFromTheLowestInteger) {
  Tensor A = placeholder({3, 4}, DataType::int32(), "A");
  IterVar k = reduce_axis(0, 4, "k");
  Tensor B = compute(
      {3}, [&](Var i) { return te::max(A(i, k) - 1000, {k}); }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B}, "imax");
  EXPECT_NE(tir::to_string(f).find("-2147483648"), std::string::npos) << tir::to_string(f);
  std::vector<int32_t> a = {5, -7, 3, 9, -1, -2, -3, -4, 100, 0, 50, 7}, b(3, 0);
  int64_t sa[2] = {3, 4}, sb[1] = {3};
  DLTensor ta{a.data(), {kDLCPU, 0}, 2, {kDLInt, 32, 1}, sa, nullptr, 0};
  DLTensor tb{b.data(), {kDLCPU, 0}, 1, {kDLInt, 32, 1}, sb, nullptr, 0};
  run(f, {&ta, &tb});
  EXPECT_EQ(b, (std::vector<int32_t>{9 - 1000, -1 - 1000, 100 - 1000}));
}

TEST(TeLower, MaxReductionStartsFromMinusInfinity) {
  Tensor A = placeholder({4, 5}, DataType::float32(), "A");
  IterVar k = reduce_axis(0, 5, "k");
  Tensor B = compute(
      {4}, [&](Var i) { return te::max(A(i, k) - 100.0f, {k}); }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, B}, "rowmax");
  EXPECT_NE(tir::to_string(f).find("-inf"), std::string::npos) << tir::to_string(f);
  HostTensor a({4, 5}), b({4});
  fill_random(a, kSeed);
  run(f, {a.ptr(), b.ptr()});
  std::vector<double> want(4, -1e300);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) want[i] = std::max(want[i], double(a.at({i, j})) - 100.0);
  expect_close(b, want);
}

// An argument placeholder the outputs do not read (a concat operand the operator drops, the
// input of a reduction over an empty axis) is still a parameter, in its place in the list; a
// compute tensor outside the schedule is still an error.
TEST(TeLower, UnreadPlaceholderArgumentStaysAParameter) {
  Tensor A = placeholder({3}, DataType::float32(), "A");
  Tensor Unused = placeholder({2, 0}, DataType::float32(), "Unused");
  Tensor B = compute({3}, [&](Var i) { return A(i) * 2.0f; }, "B");
  Schedule s = create_schedule({B});
  tir::PrimFunc f = lower(s, {A, Unused, B}, "drops_one");
  ASSERT_EQ(f->params().size(), 3u);
  HostTensor a({3}), u({2, 0}), b({3});
  fill_random(a, kSeed);
  run(f, {a.ptr(), u.ptr(), b.ptr()});
  expect_close(b, {2.0 * a[0], 2.0 * a[1], 2.0 * a[2]});
  EXPECT_THROW(lower(s, {A, Unused, Unused, B}, "twice"), Error);
  Tensor Other = compute({3}, [&](Var i) { return A(i) + 1.0f; }, "Other");
  EXPECT_THROW(lower(s, {A, Other, B}, "not_scheduled"), Error);
}

}  // namespace
}  // namespace anvil::te
