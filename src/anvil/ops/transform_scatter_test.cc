// gather_nd, scatter_elements and scatter_nd kernels (and their type inference) against naive
// references on random data: negative indices, batch_dims, every supported reduction, a symbolic dim.
#include "anvil/ops/transform_test_util.h"

namespace anvil::ops {
namespace {

using namespace transform_test;  // NOLINT(google-build-using-namespace)

class TransformScatterKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    register_runtime_functions();
    std::printf("transform scatter kernels seed %u\n", kSeed + 7);
  }
  std::mt19937 rng{kSeed + 7};
  graph::BlockBuilder b;
  ir::Var n = ir::size_var("n");
};

TEST_F(TransformScatterKernels, GatherNdPlainAndBatched) {
  Tensor x = random_f32({4, 5, 3}, rng);
  Tensor ind = ints({2, 2}, {0, -1, 3, 2});  // rows (0, 4) and (3, 2)
  auto e = b.call("gather_nd", {param("x", {4, 5, n}), param("i", {2, 2}, kI64)});
  expect_elements(run(e, {x, ind}, {{2, 3}}, {{"n", 3}})[0], [&](const Idx& i) {
    int64_t r = int64_t(at(ind, {i[0], 0})), c = int64_t(at(ind, {i[0], 1}));
    return at(x, {r < 0 ? r + 4 : r, c < 0 ? c + 5 : c, i[1]});
  });
  Tensor bi = ints({4, 1}, {1, 0, 4, -2});
  auto g = b.call("gather_nd", {param("x", {4, 5, 3}), param("i", {4, 1}, kI64)}, {{"batch_dims", 1}});
  expect_elements(run(g, {x, bi}, {{4, 3}})[0], [&](const Idx& i) {
    int64_t c = int64_t(at(bi, {i[0], 0}));
    return at(x, {i[0], c < 0 ? c + 5 : c, i[1]});
  });
}

TEST_F(TransformScatterKernels, ScatterElementsAllReductions) {
  Tensor x = random_f32({3, 37}, rng), upd = random_f32({2, 4}, rng);
  Tensor ind = ints({2, 4}, {0, 36, -1, 5, 36, 2, 5, 0});
  for (std::string red : {"none", "add", "mul", "max", "min"}) {
    SCOPED_TRACE(red);
    auto e = b.call("scatter_elements", {param("x", {3, n}), param("i", {2, 4}, kI64), param("u", {2, 4})},
                    {{"axis", 1}, {"reduction", red}});
    std::vector<double> ref(3 * 37);
    for (int64_t k = 0; k < 3 * 37; ++k) ref[k] = at(x, {k / 37, k % 37});
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t c = 0; c < 4; ++c) {
        int64_t j = int64_t(at(ind, {r, c}));
        double& o = ref[r * 37 + (j < 0 ? j + 37 : j)];
        double u = at(upd, {r, c});
        o = red == "none" ? u : red == "add" ? float(o + u) : red == "mul" ? float(o * u) : red == "max" ? std::max(o, u) : std::min(o, u);
      }
    expect_elements(run(e, {x, ind, upd}, {{3, 37}}, {{"n", 37}})[0], [&](const Idx& i) { return ref[i[0] * 37 + i[1]]; });
  }
}

TEST_F(TransformScatterKernels, ScatterNdRowsAndElements) {
  Tensor x = random_f32({5, 6}, rng), rows = random_f32({2, 6}, rng), elems = random_f32({3}, rng);
  Tensor ri = ints({2, 1}, {3, -5});
  auto e = b.call("scatter_nd", {param("x", {5, 6}), param("i", {2, 1}, kI64), param("u", {2, 6})});
  expect_elements(run(e, {x, ri, rows}, {{5, 6}})[0], [&](const Idx& i) {
    return i[0] == 3 ? at(rows, {0, i[1]}) : i[0] == 0 ? at(rows, {1, i[1]}) : at(x, i);
  });
  Tensor ei = ints({3, 2}, {1, 1, 4, -1, 1, 1});
  auto a = b.call("scatter_nd", {param("x", {5, 6}), param("i", {3, 2}, kI64), param("u", {3})}, {{"reduction", "add"}});
  expect_elements(run(a, {x, ei, elems}, {{5, 6}})[0], [&](const Idx& i) {
    double v = at(x, i);
    if (i[0] == 1 && i[1] == 1) v = float(float(v + at(elems, {0})) + at(elems, {2}));
    if (i[0] == 4 && i[1] == 5) v = float(v + at(elems, {1}));
    return v;
  }, 1e-6);
}

// The kernels are one pass over the updates: many updates (the gather form cost output x
// updates, and 'mul' took at most 64), repeated indices applied in order, an index out of range skipped.
TEST_F(TransformScatterKernels, ManyUpdatesInOrderAndOutOfRangeIndicesSkipped) {
  constexpr int kData = 20000, kUpd = 3000;
  Tensor x = random_f32({kData}, rng), upd = random_f32({kUpd}, rng);
  std::vector<int64_t> idx(kUpd);
  std::uniform_int_distribution<int64_t> pick(-kData, kData + 5);  // a few out of range
  for (int64_t& v : idx) v = pick(rng) % 50;  // few targets: many repeats
  idx[7] = kData + 3;
  idx[9] = -kData - 1;
  Tensor ind = ints({kUpd, 1}, idx);
  for (std::string red : {"none", "mul", "add"}) {
    SCOPED_TRACE(red);
    auto e = b.call("scatter_nd", {param("x", {kData}), param("i", {kUpd, 1}, kI64), param("u", {kUpd})},
                    {{"reduction", red}});
    std::vector<double> ref(kData);
    for (int64_t k = 0; k < kData; ++k) ref[k] = at(x, {k});
    for (int64_t k = 0; k < kUpd; ++k) {
      int64_t j = idx[k] < 0 ? idx[k] + kData : idx[k];
      if (j < 0 || j >= kData) continue;
      double u = at(upd, {k});
      ref[j] = red == "none" ? u : red == "mul" ? float(ref[j] * u) : float(ref[j] + u);
    }
    expect_elements(run(e, {x, ind, upd}, {{kData}})[0], [&](const Idx& i) { return ref[i[0]]; }, 1e-5);
  }
}

TEST_F(TransformScatterKernels, TypeInferenceErrors) {
  EXPECT_EQ(graph::to_string(b.call("gather_nd", {param("x", {n, 5, 3}), param("i", {7, 2}, kI64)}).type()),
            "Tensor[(7, 3), float32]");
  EXPECT_THROW(b.call("gather_nd", {param("x", {4, 5}), param("i", {2, 3}, kI64)}), Error);
  EXPECT_THROW(b.call("scatter_nd", {param("x", {4, 5}), param("i", {2, 1}, kI64), param("u", {2})}), Error);
  EXPECT_THROW(b.call("scatter_elements", {param("x", {4, 5}), param("i", {2, 2}, kI64), param("u", {2, 2})},
                      {{"reduction", "prod"}}),
               Error);
}

}  // namespace
}  // namespace anvil::ops
