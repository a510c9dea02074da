// The gpu family's pooling, conv2d, norm and hand-kernel rows, and fused groups (an anchor with
// its epilogue, an elementwise chain, a reduction with prologue and epilogue), run on the
// Vulkan device against float64 references or the cpu rows' kernels (gpu_op_test_util.h).
#include <algorithm>
#include <cmath>

#include "anvil/ops/gpu/gpu_op_test_util.h"

namespace anvil::ops {
namespace {

using gpu_testing::GpuOps;

using graph::AttrValue;
using graph::Attrs;
using graph::Type;
using ir::DataType;
using testing::numel;
using testing::random_values;

TEST_F(GpuOps, MaxAndAvgPool2d) {
  DataType f = DataType::float32();
  std::vector<int64_t> shape = {2, 3, 9, 11};
  auto a = random_values(numel(shape), rng, -2, 2);
  for (bool is_max : {true, false}) {
    GpuKernel k = build(is_max ? "nn.max_pool2d" : "nn.avg_pool2d", {Type::tensor(shape, f)},
                        {{"pool_size", AttrValue::ints({3, 3})}, {"strides", AttrValue::ints({2, 2})}});
    std::vector<int64_t> os = {2, 3, 4, 5};
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {os});
    std::vector<double> want;
    for (int nc = 0; nc < 6; ++nc)
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) {
          double m = -1e300, s = 0;
          for (int dy = 0; dy < 3; ++dy)
            for (int dx = 0; dx < 3; ++dx) {
              double v = a[static_cast<size_t>((nc * 9 + y * 2 + dy) * 11 + x * 2 + dx)];
              m = std::max(m, v), s += v;
            }
          want.push_back(is_max ? m : s / 9);
        }
    expect_near(out[0], want, 1e-5, is_max ? "max_pool2d" : "avg_pool2d");
  }
}

TEST_F(GpuOps, CumsumAsASingleInvocationKernel) {
  DataType f = DataType::float32();
  std::vector<int64_t> shape = {4, 50};
  auto a = random_values(numel(shape), rng, -1, 1);
  GpuKernel k = build("cumsum", {Type::tensor(shape, f)}, {{"axis", int64_t{1}}});
  auto out = run(k, {testing::make_tensor(shape, f, a)}, {shape});
  std::vector<double> want(a.size());
  for (int i = 0; i < 4; ++i) {
    double s = 0;
    for (int j = 0; j < 50; ++j) want[i * 50 + j] = s += a[i * 50 + j];
  }
  expect_near(out[0], want, 1e-5, "cumsum");
}

TEST_F(GpuOps, TopkAndScatterElementsAsSingleInvocationKernels) {
  DataType f = DataType::float32(), i64 = DataType::int64();
  {
    std::vector<int64_t> shape = {4, 20};
    auto a = random_values(numel(shape), rng, -1, 1);
    GpuKernel k = build("topk", {Type::tensor(shape, f)}, {{"k", int64_t{3}}, {"axis", int64_t{1}}, {"largest", int64_t{1}}});
    auto out = run(k, {testing::make_tensor(shape, f, a)}, {{4, 3}, {4, 3}});
    for (int r = 0; r < 4; ++r) {
      std::vector<int64_t> order(20);
      for (int j = 0; j < 20; ++j) order[j] = j;
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return a[r * 20 + x] > a[r * 20 + y]; });
      for (int j = 0; j < 3; ++j) {
        ASSERT_EQ(out[0][r * 3 + j], static_cast<double>(static_cast<float>(a[r * 20 + order[j]]))) << r << "," << j;
        ASSERT_EQ(out[1][r * 3 + j], static_cast<double>(order[j])) << r << "," << j;
      }
    }
  }
  {
    std::vector<int64_t> xs = {3, 5}, is = {2, 4};
    auto x = random_values(15, rng, -1, 1), u = random_values(8, rng, -1, 1);
    std::vector<double> idx = {4, 0, 2, 1, 3, 1, 0, 4};  // distinct per row
    GpuKernel k = build("scatter_elements", {Type::tensor(xs, f), Type::tensor(is, i64), Type::tensor(is, f)},
                        {{"axis", int64_t{1}}});
    auto out = run(k, {testing::make_tensor(xs, f, x), testing::make_tensor(is, i64, idx), testing::make_tensor(is, f, u)},
                   {xs});
    std::vector<double> want = x;
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 4; ++c) want[static_cast<size_t>(r * 5 + static_cast<int>(idx[r * 4 + c]))] = u[r * 4 + c];
    expect_near(out[0], want, 1e-7, "scatter_elements");
  }
}

// The rows without a hand-written reference here: the gpu kernel against the cpu row's kernel
// (llvm) on the same inputs; both reuse one compute, so this checks the gpu schedules.
TEST_F(GpuOps, NormsAndLrnMatchTheCpuRows) {
  DataType f = DataType::float32();
  ir::Var n = ir::size_var("n");
  struct Case {
    std::string op;
    std::vector<Type> types;
    std::vector<std::vector<int64_t>> shapes;
    Attrs attrs;
    std::map<std::string, int64_t> dims;
  };
  auto t = [&](std::vector<int64_t> s) { return Type::tensor(s, f); };
  std::vector<Case> cases = {
      {"nn.rms_norm", {Type::tensor({n, ir::int_imm(40)}, f), t({40})}, {{9, 40}, {40}}, {{"epsilon", 1e-5}}, {{"n", 9}}},
      {"nn.instance_norm", {t({2, 6, 5, 7}), t({6}), t({6})}, {{2, 6, 5, 7}, {6}, {6}}, {{"epsilon", 1e-5}}, {}},
      {"nn.group_norm", {t({2, 6, 5, 3}), t({6}), t({6})}, {{2, 6, 5, 3}, {6}, {6}},
       {{"num_groups", int64_t{3}}, {"epsilon", 1e-5}}, {}},
      {"nn.batch_norm", {t({2, 37, 5, 3}), t({37}), t({37}), t({37}), t({37})},
       {{2, 37, 5, 3}, {37}, {37}, {37}, {37}}, {{"epsilon", 1e-3}}, {}},
      {"nn.lrn", {t({2, 7, 3, 4})}, {{2, 7, 3, 4}}, {{"size", int64_t{4}}, {"alpha", 1e-2}, {"beta", 0.75}, {"bias", 2.0}}, {}},
  };
  for (const Case& c : cases) {
    std::vector<Tensor> ins;
    for (const auto& s : c.shapes) ins.push_back(testing::make_tensor(s, f, random_values(numel(s), rng, 0.1, 2)));
    testing::Kernel cpu = testing::build_kernel(c.op, c.types, c.attrs);
    std::vector<graph::Type> outs = cpu.out_type.is_tuple() ? cpu.out_type.fields() : std::vector<graph::Type>{cpu.out_type};
    std::vector<std::vector<int64_t>> out_shapes(outs.size(), c.shapes[0]);
    std::vector<Tensor> want = testing::run_kernel(cpu, ins, out_shapes, c.dims);
    GpuKernel k = build(c.op, c.types, c.attrs);
    auto got = run(k, ins, out_shapes, c.dims);
    for (size_t i = 0; i < want.size(); ++i) expect_near(got[i], testing::values_of(want[i]), 1e-5, c.op);
  }
}

TEST_F(GpuOps, Conv2dDirectWithPaddingStridesAndGroups) {
  DataType f = DataType::float32();
  struct Case {
    int64_t n, c, h, w, o, k, stride, pad, groups;
  };
  for (const Case& cs : {Case{2, 4, 9, 7, 6, 3, 1, 1, 1}, Case{1, 6, 11, 11, 6, 3, 2, 0, 3}}) {
    const int64_t cg = cs.c / cs.groups, og = cs.o / cs.groups;
    std::vector<int64_t> xs = {cs.n, cs.c, cs.h, cs.w}, ws = {cs.o, cg, cs.k, cs.k};
    const int64_t oh = (cs.h + 2 * cs.pad - cs.k) / cs.stride + 1, ow = (cs.w + 2 * cs.pad - cs.k) / cs.stride + 1;
    auto x = random_values(numel(xs), rng, -1, 1), w = random_values(numel(ws), rng, -1, 1);
    GpuKernel k = build("nn.conv2d", {Type::tensor(xs, f), Type::tensor(ws, f)},
                        {{"strides", AttrValue::ints({cs.stride, cs.stride})},
                         {"padding", AttrValue::ints({cs.pad, cs.pad, cs.pad, cs.pad})},
                         {"groups", cs.groups}});
    auto out = run(k, {testing::make_tensor(xs, f, x), testing::make_tensor(ws, f, w)}, {{cs.n, cs.o, oh, ow}});
    std::vector<double> want;
    for (int64_t b = 0; b < cs.n; ++b)
      for (int64_t o = 0; o < cs.o; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t xx = 0; xx < ow; ++xx) {
            double s = 0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t ky = 0; ky < cs.k; ++ky)
                for (int64_t kx = 0; kx < cs.k; ++kx) {
                  int64_t iy = y * cs.stride + ky - cs.pad, ix = xx * cs.stride + kx - cs.pad;
                  if (iy < 0 || iy >= cs.h || ix < 0 || ix >= cs.w) continue;
                  int64_t ic = (o / og) * cg + c;
                  s += x[static_cast<size_t>(((b * cs.c + ic) * cs.h + iy) * cs.w + ix)] *
                       w[static_cast<size_t>(((o * cg + c) * cs.k + ky) * cs.k + kx)];
                }
            want.push_back(s);
          }
    expect_near(out[0], want, 1e-5, "conv2d groups=" + std::to_string(cs.groups));
  }
}

TEST_F(GpuOps, FusedGroupsConvEpilogueElementwiseChainAndReduceEpilogue) {
  DataType f = DataType::float32();
  {
    GpuKernel k = build_group(R"(
      def @g(%p0: Tensor[(1, 3, 6, 6), float32], %p1: Tensor[(5, 3, 3, 3), float32],
             %p2: Tensor[(5, 1, 1), float32]) -> Tensor[(1, 5, 6, 6), float32] {
        %t0: Tensor[(1, 5, 6, 6), float32] = nn.conv2d(%p0, %p1, padding=[1, 1, 1, 1])
        %t1: Tensor[(1, 5, 6, 6), float32] = add(%t0, %p2)
        %t2: Tensor[(1, 5, 6, 6), float32] = clip(%t1, max=6.0, min=0.0)
        return %t2
      }
    )");
    auto x = random_values(108, rng, -1, 1), w = random_values(135, rng, -1, 1), b = random_values(5, rng, -1, 1);
    auto out = run(k, {testing::make_tensor({1, 3, 6, 6}, f, x), testing::make_tensor({5, 3, 3, 3}, f, w),
                       testing::make_tensor({5, 1, 1}, f, b)},
                   {{1, 5, 6, 6}});
    std::vector<double> want;
    for (int o = 0; o < 5; ++o)
      for (int y = 0; y < 6; ++y)
        for (int xx = 0; xx < 6; ++xx) {
          double s = b[o];
          for (int c = 0; c < 3; ++c)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                int iy = y + ky - 1, ix = xx + kx - 1;
                if (iy >= 0 && iy < 6 && ix >= 0 && ix < 6) s += x[(c * 6 + iy) * 6 + ix] * w[((o * 3 + c) * 3 + ky) * 3 + kx];
              }
          want.push_back(std::min(std::max(s, 0.0), 6.0));
        }
    expect_near(out[0], want, 1e-5, "fused conv2d+add+clip");
  }
  {
    GpuKernel k = build_group(R"(
      def @g(%p0: Tensor[(3, 70), float32], %p1: Tensor[(70), float32]) -> Tensor[(3, 70), float32] {
        %t0: Tensor[(3, 70), float32] = subtract(%p0, %p1)
        %t1: Tensor[(3, 70), float32] = exp(%t0)
        %t2: Tensor[(3, 70), float32] = multiply(%t1, %p0)
        return %t2
      }
    )");
    auto a = random_values(210, rng, -1, 1), b = random_values(70, rng, -1, 1);
    auto out = run(k, {testing::make_tensor({3, 70}, f, a), testing::make_tensor({70}, f, b)}, {{3, 70}});
    std::vector<double> want(210);
    for (int i = 0; i < 210; ++i) want[i] = std::exp(a[i] - b[i % 70]) * a[i];
    expect_near(out[0], want, 1e-5, "fused elementwise chain");
  }
  {
    // Long rows: the workgroup reduction with a fused prologue and epilogue.
    GpuKernel k = build_group(R"(
      def @g(%p0: Tensor[(4, 500), float32]) -> Tensor[(4), float32] {
        %t0: Tensor[(4, 500), float32] = multiply(%p0, %p0)
        %t1: Tensor[(4), float32] = sum(%t0, axes=[1], keepdims=0)
        %t2: Tensor[(4), float32] = sqrt(%t1)
        return %t2
      }
    )");
    auto a = random_values(2000, rng, -1, 1);
    auto out = run(k, {testing::make_tensor({4, 500}, f, a)}, {{4}});
    std::vector<double> want(4, 0.0);
    for (int i = 0; i < 2000; ++i) want[i / 500] += a[i] * a[i];
    for (double& v : want) v = std::sqrt(v);
    expect_near(out[0], want, 1e-5, "fused square+sum+sqrt");
  }
}

}  // namespace
}  // namespace anvil::ops
