// vm.builtin.nonzero, vm.builtin.dynamic_slice and vm.builtin.unique (builtins/data_dependent.cc)
// against naive references on random tensors (unique: on hand-checked ones): every shape of small rank, every zero fraction from none to all,
// starts/ends/steps over and past both ends of each axis (ONNX Slice clamping).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

#include "anvil/runtime/register.h"
#include "anvil/runtime/registry.h"

namespace anvil::vm {
namespace {

Value call(const std::string& builtin, std::vector<Value> args) { return Registry::get(builtin).call(args); }

Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, DataType::int64());
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

class DataDependentBuiltins : public ::testing::Test {
 protected:
  void SetUp() override { register_runtime_functions(); }
};

TEST_F(DataDependentBuiltins, NonZeroListsIndicesInRowMajorOrder) {
  std::mt19937 rng(11);
  for (std::vector<int64_t> shape : {std::vector<int64_t>{7}, {3, 4}, {2, 3, 5}, {0, 3}, {}}) {
    for (double fraction : {0.0, 0.5, 1.0}) {
      Tensor x = Tensor::empty(shape, DataType::float32());
      auto* p = static_cast<float*>(x.data());
      std::uniform_real_distribution<double> u(0, 1);
      for (int64_t i = 0; i < x.numel(); ++i) p[i] = u(rng) < fraction ? (i % 2 ? -0.0f : 0.0f) : 1.0f + static_cast<float>(i);
      Tensor y = call("vm.builtin.nonzero", {x}).as_tensor();
      // Reference: unravel every non-zero linear index.
      std::vector<int64_t> dims = shape.empty() ? std::vector<int64_t>{1} : shape;
      std::vector<std::vector<int64_t>> rows(dims.size());
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (p[i] == 0.0f) continue;
        int64_t rest = i;
        for (size_t d = dims.size(); d-- > 0;) rows[d].push_back(rest % dims[d]), rest /= dims[d];
      }
      const auto n = static_cast<int64_t>(rows[0].size());
      ASSERT_EQ(y.shape(), (std::vector<int64_t>{static_cast<int64_t>(dims.size()), n}));
      ASSERT_EQ(y.dtype(), DataType::int64());
      const auto* o = static_cast<const int64_t*>(y.data());
      for (size_t d = 0; d < dims.size(); ++d)
        for (int64_t k = 0; k < n; ++k) EXPECT_EQ(o[static_cast<int64_t>(d) * n + k], rows[d][static_cast<size_t>(k)]);
    }
  }
}

// ONNX Slice of one axis of length d: the indices it takes.
std::vector<int64_t> slice_indices(int64_t d, int64_t b, int64_t e, int64_t s) {
  if (b < 0) b += d;
  if (e < 0) e += d;
  std::vector<int64_t> out;
  if (s > 0) {
    for (int64_t i = std::clamp<int64_t>(b, 0, d); i < std::clamp<int64_t>(e, 0, d); i += s) out.push_back(i);
  } else {
    for (int64_t i = std::clamp<int64_t>(b, 0, d - 1); i > std::clamp<int64_t>(e, -1, d - 1); i += s) out.push_back(i);
  }
  return out;
}

TEST_F(DataDependentBuiltins, DynamicSliceClampsAsOnnxSlice) {
  std::mt19937 rng(12);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int64_t> shape{1 + static_cast<int64_t>(rng() % 5), 1 + static_cast<int64_t>(rng() % 6),
                               1 + static_cast<int64_t>(rng() % 4)};
    Tensor x = Tensor::empty(shape, DataType::int32());
    auto* p = static_cast<int32_t*>(x.data());
    for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<int32_t>(i);
    std::vector<int64_t> axes{2, 0}, starts, ends, steps;  // the last axis strided too
    for (int64_t a : axes) {
      auto d = static_cast<int64_t>(shape[static_cast<size_t>(a)]);
      std::uniform_int_distribution<int64_t> v(-2 * d - 1, 2 * d + 1);
      starts.push_back(v(rng)), ends.push_back(v(rng));
      int64_t s = 1 + static_cast<int64_t>(rng() % 3);
      steps.push_back(rng() % 2 ? s : -s);
    }
    Tensor y = call("vm.builtin.dynamic_slice", {x, int64_tensor(starts), int64_tensor(ends), int64_tensor(steps),
                                                 Value::shape(axes)})
                   .as_tensor();
    std::vector<std::vector<int64_t>> take{{}, {}, {}};
    for (int64_t i = 0; i < shape[1]; ++i) take[1].push_back(i);
    for (size_t k = 0; k < axes.size(); ++k)
      take[static_cast<size_t>(axes[k])] = slice_indices(shape[static_cast<size_t>(axes[k])], starts[k], ends[k], steps[k]);
    ASSERT_EQ(y.shape(), (std::vector<int64_t>{static_cast<int64_t>(take[0].size()), static_cast<int64_t>(take[1].size()),
                                               static_cast<int64_t>(take[2].size())}));
    const auto* o = static_cast<const int32_t*>(y.data());
    size_t at = 0;
    for (int64_t i : take[0])
      for (int64_t j : take[1])
        for (int64_t k : take[2]) EXPECT_EQ(o[at++], p[(i * shape[1] + j) * shape[2] + k]);
  }
}

TEST_F(DataDependentBuiltins, UniqueSortedAndInFirstOccurrenceOrder) {
  // x = [3, 1, 3, 2, 1, 3]: sorted Y [1, 2, 3], first at [1, 3, 0], counts [2, 1, 3];
  // unsorted Y [3, 1, 2]. Slices along axis 0 of [[1, 2], [0, 5], [1, 2]]: [[0, 5], [1, 2]].
  Tensor x = Tensor::empty({6}, DataType::int64());
  int64_t values[] = {3, 1, 3, 2, 1, 3};
  std::memcpy(x.data(), values, sizeof values);
  auto ints = [](const Value& v, size_t i) {
    Tensor t = v.as_array()[i].as_tensor();
    const auto* p = static_cast<const int64_t*>(t.data());
    return std::vector<int64_t>(p, p + t.numel());
  };
  Value s = call("vm.builtin.unique", {x, int64_t{1}, int64_t{-1}});
  EXPECT_EQ(ints(s, 0), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(ints(s, 1), (std::vector<int64_t>{1, 3, 0}));
  EXPECT_EQ(ints(s, 2), (std::vector<int64_t>{2, 0, 2, 1, 0, 2}));
  EXPECT_EQ(ints(s, 3), (std::vector<int64_t>{2, 1, 3}));
  Value f = call("vm.builtin.unique", {x, int64_t{0}, int64_t{-1}});
  EXPECT_EQ(ints(f, 0), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(ints(f, 1), (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(ints(f, 2), (std::vector<int64_t>{0, 1, 0, 2, 1, 0}));
  EXPECT_EQ(ints(f, 3), (std::vector<int64_t>{3, 2, 1}));
  Tensor m = Tensor::empty({3, 2}, DataType::int64());
  int64_t rows[] = {1, 2, 0, 5, 1, 2};
  std::memcpy(m.data(), rows, sizeof rows);
  Value r = call("vm.builtin.unique", {m, int64_t{1}, int64_t{0}});
  EXPECT_EQ(r.as_array()[0].as_tensor().shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ints(r, 0), (std::vector<int64_t>{0, 5, 1, 2}));
  EXPECT_EQ(ints(r, 2), (std::vector<int64_t>{1, 0, 1}));
}

TEST_F(DataDependentBuiltins, DynamicSliceRejectsAZeroStepAndBadAxes) {
  Tensor x = Tensor::empty({4}, DataType::float32());
  EXPECT_THROW(call("vm.builtin.dynamic_slice", {x, int64_tensor({0}), int64_tensor({2}), int64_tensor({0}),
                                                 Value::shape(std::vector<int64_t>{0})}),
               Error);
  EXPECT_THROW(call("vm.builtin.dynamic_slice", {x, int64_tensor({0}), int64_tensor({2}), int64_tensor({1}),
                                                 Value::shape(std::vector<int64_t>{1})}),
               Error);
}

}  // namespace
}  // namespace anvil::vm
