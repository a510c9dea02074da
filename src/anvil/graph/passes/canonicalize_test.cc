// canonicalize: batch norm folded into conv2d — golden text, and the folded graph computes what
// the original did (a double-precision reference of conv2d, add and batch_norm on random data).
#include "anvil/graph/passes/canonicalize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "anvil/graph/builder.h"
#include "anvil/graph/passes/pass_testing.h"

namespace anvil::graph::passes {
namespace {

using testing::expect_pass;

IRModule canon(const IRModule& m) { return canonicalize(m); }

const char* kHeader = "def @main(%x: Tensor[(n, 1, 4, 4), float32]) -> Tensor[(n, 2, 4, 4), float32] {\n";

TEST(GraphCanonicalize, BatchNormFoldsIntoTheConvWeightAndABiasAdd) {
  // scale = gamma / sqrt(var + 1) = [1, 3]; bias = beta - mean * scale = [-0.25, -4].
  expect_pass(canon, std::string(kHeader) + R"(
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = nn.batch_norm(%c, const[1], const[2], const[3], const[4], epsilon=1.0)
      return %b
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 2.0]
    const[1]: Tensor[(2,), float32] = [2.0, 3.0]
    const[2]: Tensor[(2,), float32] = [0.25, -1.0]
    const[3]: Tensor[(2,), float32] = [0.5, 1.0]
    const[4]: Tensor[(2,), float32] = [3.0, 0.0]
  )",
              std::string(kHeader) + R"(
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = add(%c, const[1])
      return %b
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 6.0]
    const[1]: Tensor[(1, 2, 1, 1), float32] = [-0.25, -4.0]
  )");
}

TEST(GraphCanonicalize, AConvBiasBeforeTheBatchNormIsTakenIntoTheNewBias) {
  // bias = (b - mean) * scale + beta = [(1.5 - 0.5) * 1 + 0.25, (2 - 1) * 3 - 1] = [1.25, 2].
  expect_pass(canon, std::string(kHeader) + R"(
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %cb: Tensor[(n, 2, 4, 4), float32] = add(%c, const[5])
      %b: Tensor[(n, 2, 4, 4), float32] = nn.batch_norm(%cb, const[1], const[2], const[3], const[4], epsilon=1.0)
      return %b
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 2.0]
    const[1]: Tensor[(2,), float32] = [2.0, 3.0]
    const[2]: Tensor[(2,), float32] = [0.25, -1.0]
    const[3]: Tensor[(2,), float32] = [0.5, 1.0]
    const[4]: Tensor[(2,), float32] = [3.0, 0.0]
    const[5]: Tensor[(2, 1, 1), float32] = [1.5, 2.0]
  )",
              std::string(kHeader) + R"(
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = add(%c, const[1])
      return %b
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 6.0]
    const[1]: Tensor[(1, 2, 1, 1), float32] = [1.25, 2.0]
  )");
}

TEST(GraphCanonicalize, NoFoldWhenTheConvHasAnotherUseOrTheParametersAreInputs) {
  IRModule shared = parse_module(std::string(kHeader) + R"(
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = nn.batch_norm(%c, const[1], const[1], const[1], const[1])
      %s: Tensor[(n, 2, 4, 4), float32] = add(%b, %c)
      return %s
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 2.0]
    const[1]: Tensor[(2,), float32] = [2.0, 3.0]
  )");
  EXPECT_TRUE(canonicalize(shared).main().same_as(shared.main()));
  IRModule input_gamma = parse_module(R"(
    def @main(%x: Tensor[(n, 1, 4, 4), float32], %g: Tensor[(2,), float32]) -> Tensor[(n, 2, 4, 4), float32] {
      %c: Tensor[(n, 2, 4, 4), float32] = nn.conv2d(%x, const[0])
      %b: Tensor[(n, 2, 4, 4), float32] = nn.batch_norm(%c, %g, const[1], const[1], const[1])
      return %b
    }
    const[0]: Tensor[(2, 1, 1, 1), float32] = [1.0, 2.0]
    const[1]: Tensor[(2,), float32] = [2.0, 3.0]
  )");
  EXPECT_TRUE(canonicalize(input_gamma).main().same_as(input_gamma.main()));
}

// ---- numeric check: a 3x3 padded, strided conv with a bias, then batch norm ----------------

struct Shape4 {
  int64_t n, c, h, w;
};

std::vector<float> values_of(const Expr& e) {
  const Tensor& t = e.as<ConstantNode>()->data();
  const auto* p = static_cast<const float*>(t.data());
  return std::vector<float>(p, p + t.numel());
}

// Runs a function of conv2d / add / nn.batch_norm bindings (the ops this pass produces and
// consumes) in double on NCHW data; every other op is a test failure.
std::vector<double> run(const Function& f, const std::vector<double>& input, Shape4 s) {
  std::map<const ExprNode*, std::pair<std::vector<double>, Shape4>> env;
  env[f.params()[0].get()] = {input, s};
  for (const Binding& b : f.bindings()) {
    const auto* c = b.value.as<CallNode>();
    auto [x, xs] = env.at(c->args()[0].get());
    std::vector<double> y;
    Shape4 ys = xs;
    if (c->op() == "nn.conv2d") {
      std::vector<float> w = values_of(c->args()[1]);
      auto wshape = c->args()[1].type().static_shape().value();
      std::vector<int64_t> pad = get_ints(c->attrs(), "padding", {0, 0, 0, 0});
      std::vector<int64_t> st = get_ints(c->attrs(), "strides", {1, 1});
      auto out = c->type().static_shape();
      ys = {xs.n, wshape[0], (xs.h + pad[0] + pad[2] - wshape[2]) / st[0] + 1, (xs.w + pad[1] + pad[3] - wshape[3]) / st[1] + 1};
      y.assign(static_cast<size_t>(ys.n * ys.c * ys.h * ys.w), 0.0);
      for (int64_t n = 0; n < ys.n; ++n)
        for (int64_t o = 0; o < ys.c; ++o)
          for (int64_t i = 0; i < ys.h; ++i)
            for (int64_t j = 0; j < ys.w; ++j) {
              double acc = 0;
              for (int64_t ci = 0; ci < xs.c; ++ci)
                for (int64_t ki = 0; ki < wshape[2]; ++ki)
                  for (int64_t kj = 0; kj < wshape[3]; ++kj) {
                    int64_t hi = i * st[0] + ki - pad[0], wj = j * st[1] + kj - pad[1];
                    if (hi < 0 || hi >= xs.h || wj < 0 || wj >= xs.w) continue;
                    acc += x[((n * xs.c + ci) * xs.h + hi) * xs.w + wj] *
                           w[((o * wshape[1] + ci) * wshape[2] + ki) * wshape[3] + kj];
                  }
              y[((n * ys.c + o) * ys.h + i) * ys.w + j] = acc;
            }
      (void)out;
    } else if (c->op() == "add" || c->op() == "nn.batch_norm") {
      std::vector<std::vector<float>> p;
      for (size_t k = 1; k < c->args().size(); ++k) p.push_back(values_of(c->args()[k]));
      double eps = get_float(c->attrs(), "epsilon", 1e-5);
      y = x;
      for (size_t k = 0; k < y.size(); ++k) {
        size_t ch = static_cast<size_t>((static_cast<int64_t>(k) / (xs.h * xs.w)) % xs.c);
        if (c->op() == "add") y[k] = x[k] + p[0][ch];
        else y[k] = (x[k] - p[2][ch]) / std::sqrt(p[3][ch] + eps) * p[0][ch] + p[1][ch];
      }
    } else {
      ADD_FAILURE() << "unexpected op " << c->op();
    }
    env[b.var.get()] = {y, ys};
  }
  return env.at(f.result().get()).first;
}

Tensor random_tensor(const std::vector<int64_t>& shape, std::mt19937& rng, float lo, float hi) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  std::uniform_real_distribution<float> d(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) static_cast<float*>(t.data())[i] = d(rng);
  return t;
}

TEST(GraphCanonicalize, TheFoldedGraphComputesWhatTheOriginalDid) {
  uint32_t seed = 20261202;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  BlockBuilder bb;
  Var x = bb.add_param("x", Type::tensor(std::vector<int64_t>{2, 3, 7, 5}, DataType::float32()));
  Expr conv = bb.emit_call("nn.conv2d", {x, Constant::make(random_tensor({4, 3, 3, 3}, rng, -1, 1))},
                           {{"padding", AttrValue::ints({1, 0, 1, 2})}, {"strides", AttrValue::ints({2, 1})}}, "c");
  Expr biased = bb.emit_call("add", {conv, Constant::make(random_tensor({1, 4, 1, 1}, rng, -1, 1))}, {}, "cb");
  Expr bn = bb.emit_call("nn.batch_norm",
                         {biased, Constant::make(random_tensor({4}, rng, 0.5f, 2)), Constant::make(random_tensor({4}, rng, -1, 1)),
                          Constant::make(random_tensor({4}, rng, -1, 1)), Constant::make(random_tensor({4}, rng, 0.1f, 3))},
                         {{"epsilon", AttrValue(1e-3)}}, "bn");
  Function f = bb.finish(bn);
  Function g = canonicalize(f);
  ASSERT_EQ(g.bindings().size(), 2u);
  EXPECT_EQ(g.bindings()[1].value.as<CallNode>()->op(), "add");
  Shape4 s{2, 3, 7, 5};
  std::vector<double> input(static_cast<size_t>(s.n * s.c * s.h * s.w));
  std::uniform_real_distribution<double> d(-2, 2);
  for (double& v : input) v = d(rng);
  std::vector<double> want = run(f, input, s), got = run(g, input, s);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << i;
}

}  // namespace
}  // namespace anvil::graph::passes
