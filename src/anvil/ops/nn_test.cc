// nn kernels: each operator lowered through ops::lower_call, built for "llvm" and run on
// random inputs (uniform [-1, 1), seed kSeed, printed) against naive double references, with
// sizes that divide no tile (37 channels, 7x7 stride 2, 13x13 pools), depthwise and grouped
// convolutions, dilation, asymmetric padding, and symbolic batches (the dims passed as the
// trailing int32 arguments). Tolerance: 1e-5 + 2e-5 x the sum of |terms| (float32 sums of up
// to a few thousand products) for conv/dense/matmul; 2e-5 relative + 2e-6 absolute otherwise.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <random>

#include "anvil/graph/builder.h"
#include "anvil/ir/float16.h"
#include "anvil/ops/lower_call.h"
#include "anvil/ops/prepack.h"
#include "anvil/ops/strategy.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/te/lower.h"
#include "anvil/tir/printer.h"

namespace anvil::ops {
namespace {

using graph::Attrs;
using graph::AttrValue;
using graph::Type;
using Shape = std::vector<int64_t>;

constexpr uint32_t kSeed = 20261203;
const DataType f32 = DataType::float32();

Type ts(const std::vector<int64_t>& s, DataType d) { return Type::tensor(s, d); }

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

struct Kernel {
  Module module;
  LoweredCall lowered;
  Type out_type;
  std::string impl;
};

Kernel build(const std::string& op, const std::vector<Type>& types, const Attrs& attrs) {
  register_runtime_functions();
  graph::BlockBuilder b;
  std::vector<graph::Expr> args;
  for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
  graph::Expr call = b.call(op, args, attrs);
  Kernel k;
  k.out_type = call.type();
  k.lowered = lower_call(*call.as<graph::CallNode>(), Target::parse("llvm"), "kernel");
  k.impl = k.lowered.implementation;
  k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, Target::parse("llvm"));
  return k;
}

// The op's implementation with a relu epilogue computed after it (as operator fusion will hand
// the schedules a fused group's output), built into one kernel.
Kernel build_with_relu(const std::string& op, const std::vector<Type>& types, const Attrs& attrs) {
  register_runtime_functions();
  graph::BlockBuilder b;
  std::vector<graph::Expr> args;
  for (size_t i = 0; i < types.size(); ++i) args.push_back(b.add_param("a" + std::to_string(i), types[i]));
  graph::Expr call = b.call(op, args, attrs);
  const OpImplementation& impl = select_implementation(op, Target::parse("llvm"));
  std::vector<te::Tensor> ins;
  std::vector<te::LowerArg> largs;
  for (size_t i = 0; i < types.size(); ++i) {
    ins.push_back(te::placeholder(types[i].shape(), f32, "arg" + std::to_string(i)));
    largs.emplace_back(ins.back());
  }
  te::Tensor out = impl.compute(*call.as<graph::CallNode>(), ins)[0];
  te::Tensor relu = te::compute(
      out.shape(),
      [&](const std::vector<ir::Var>& i) { return ir::max(out(std::vector<ir::PrimExpr>(i.begin(), i.end())), 0.0f); },
      "relu");
  te::Schedule s = te::create_schedule({relu});
  impl.schedule(s, {relu}, Target::parse("llvm"));
  largs.emplace_back(relu);
  Kernel k;
  k.out_type = call.type();
  std::vector<Type> all = types;
  all.push_back(call.type());
  k.lowered.shape_vars = shape_vars_of(all);
  for (const ir::Var& v : k.lowered.shape_vars) largs.emplace_back(v);
  k.lowered.func = te::lower(s, largs, "kernel");
  k.impl = impl.name + "+relu";
  k.module = pipeline::build(std::vector<tir::PrimFunc>{k.lowered.func}, Target::parse("llvm"));
  return k;
}

struct Data {
  Shape shape;
  std::vector<float> v;
};

Data random(const Shape& s, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> d(lo, hi);
  Data out{s, std::vector<float>(size_t(numel(s)))};
  for (float& x : out.v) x = d(rng);
  return out;
}

Tensor to_tensor(const Data& d) {
  Tensor t = Tensor::empty(std::span<const int64_t>(d.shape), f32);
  std::memcpy(t.data(), d.v.data(), d.v.size() * sizeof(float));
  return t;
}

// Runs with the output (NaN-filled) of out_shape and the shape vars' values.
std::vector<float> run(Kernel& k, const std::vector<Data>& ins, const Shape& out_shape,
                       const std::map<std::string, int64_t>& dims = {}, int repeat = 1, double* seconds = nullptr) {
  std::vector<Value> args;
  std::vector<Tensor> keep;
  for (const Data& d : ins) keep.push_back(to_tensor(d));
  for (const Tensor& t : keep) args.emplace_back(t);
  Tensor out = Tensor::empty(std::span<const int64_t>(out_shape), f32);
  for (int64_t i = 0; i < numel(out_shape); ++i) static_cast<float*>(out.data())[i] = std::nanf("");
  args.emplace_back(out);
  for (const ir::Var& v : k.lowered.shape_vars) {
    auto it = dims.find(v->name());
    EXPECT_NE(it, dims.end()) << "no value for shape var " << v->name();
    args.emplace_back(static_cast<int32_t>(it == dims.end() ? 0 : it->second));
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < repeat; ++r) k.module["kernel"].call(Args(args.data(), args.size()));
  if (seconds) *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeat;
  const float* o = static_cast<const float*>(out.data());
  return std::vector<float>(o, o + numel(out_shape));
}

// scale empty: relative 2e-5 + 2e-6; else 1e-5 + 2e-5 * scale[i].
void expect_close(const std::vector<float>& got, const std::vector<double>& want, const std::vector<double>& scale,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double tol = scale.empty() ? 2e-6 + 2e-5 * std::fabs(want[i]) : 1e-5 + 2e-5 * scale[i];
    if (!(std::fabs(got[i] - want[i]) <= tol) && ++bad <= 5)
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << want[i] << " (seed " << kSeed << ")";
  }
  EXPECT_EQ(bad, 0) << what;
}

Type sym(const Shape& s, const ir::Var& n) {
  std::vector<ir::PrimExpr> d;
  for (size_t i = 0; i < s.size(); ++i) d.push_back(i == 0 ? ir::PrimExpr(n) : ir::int_imm(s[i]));
  return Type::tensor(d, f32);
}

class NnKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { std::printf("nn kernels seed %u\n", kSeed); }
  std::mt19937 rng{kSeed};
  ir::Var n = ir::size_var("n");
};

// ---- conv2d ------------------------------------------------------------------------------
struct Conv {
  Shape x, w;  // NCHW, OIHW
  std::vector<int64_t> strides{1, 1}, pad{0, 0, 0, 0}, dil{1, 1};
  int64_t groups = 1;
  bool symbolic_batch = false;
  std::string expect_impl_part;  // "" or a stage the schedule must have chosen
  int64_t prepack_block = 0;     // > 0: the weight goes through nn.conv2d_pack_weight first
};

void check_conv(const Conv& c, std::mt19937& rng, const ir::Var& n) {
  Attrs a{{"strides", AttrValue::ints(c.strides)},
          {"padding", AttrValue::ints(c.pad)},
          {"dilation", AttrValue::ints(c.dil)},
          {"groups", AttrValue(c.groups)}};
  std::vector<Type> types = {c.symbolic_batch ? sym(c.x, n) : Type::tensor(c.x, f32), Type::tensor(c.w, f32)};
  if (c.prepack_block > 0) {
    a["kernel_layout"] = AttrValue("OIHW" + std::to_string(c.prepack_block) + "o");
    types[1] = Type::tensor(Shape{c.w[0] / c.prepack_block, c.w[1], c.w[2], c.w[3], c.prepack_block}, f32);
  }
  Kernel k = build("nn.conv2d", types, a);
  const int64_t N = c.x[0], C = c.x[1], H = c.x[2], W = c.x[3], O = c.w[0], Cg = c.w[1], R = c.w[2], S = c.w[3];
  const int64_t OH = (H + c.pad[0] + c.pad[2] - c.dil[0] * (R - 1) - 1) / c.strides[0] + 1;
  const int64_t OW = (W + c.pad[1] + c.pad[3] - c.dil[1] * (S - 1) - 1) / c.strides[1] + 1;
  Data x = random(c.x, rng), w = random(c.w, rng);
  Data wk = w;
  if (c.prepack_block > 0) {
    Kernel pack = build("nn.conv2d_pack_weight", {ts(c.w, f32)}, {{"block", AttrValue(c.prepack_block)}});
    Shape ps = {c.w[0] / c.prepack_block, c.w[1], c.w[2], c.w[3], c.prepack_block};
    wk = Data{ps, run(pack, {w}, ps)};
  }
  std::vector<float> got = run(k, {x, wk}, {N, O, OH, OW}, {{"n", N}});
  std::vector<double> want, scale;
  const int64_t og = O / c.groups;
  for (int64_t b = 0; b < N; ++b)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t q = 0; q < OW; ++q) {
          double acc = 0, abs = 0;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s) {
                int64_t iy = y * c.strides[0] + r * c.dil[0] - c.pad[0],
                        ix = q * c.strides[1] + s * c.dil[1] - c.pad[1];
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                int64_t ch = (o / og) * Cg + ci;
                double p = double(x.v[((b * C + ch) * H + iy) * W + ix]) * w.v[((o * Cg + ci) * R + r) * S + s];
                acc += p;
                abs += std::fabs(p);
              }
          want.push_back(acc);
          scale.push_back(abs);
        }
  expect_close(got, want, scale, "conv2d " + k.impl);
  if (!c.expect_impl_part.empty()) {
    std::string ir = tir::to_string(k.lowered.func);
    EXPECT_NE(ir.find(c.expect_impl_part), std::string::npos) << "expected stage " << c.expect_impl_part;
  }
}

TEST_F(NnKernels, Conv2dNchwcStem37ChannelsSevenBySevenStride2) {
  check_conv({{1, 37, 23, 23}, {64, 37, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, false, "conv_blocked"}, rng, n);
}
TEST_F(NnKernels, Conv2dNchwcSymbolicBatchAsymmetricPadding) {
  check_conv({{3, 16, 10, 11}, {32, 16, 3, 3}, {1, 1}, {1, 0, 2, 1}, {1, 1}, 1, true, "conv_blocked"}, rng, n);
}
TEST_F(NnKernels, Conv2dGroupsTwoDilationTwo) {
  check_conv({{2, 8, 12, 12}, {32, 4, 3, 3}, {1, 2}, {2, 2, 2, 2}, {2, 2}, 2, false, ""}, rng, n);
}
TEST_F(NnKernels, Conv2dDepthwise37ChannelsStride2) {
  check_conv({{1, 37, 15, 15}, {37, 1, 3, 3}, {2, 2}, {0, 0, 1, 1}, {1, 1}, 37, false, ""}, rng, n);
  check_conv({{2, 24, 20, 20}, {24, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 24, true, ""}, rng, n);
}
// The depthwise schedule's per-plane padded input (batch > 1, or output rows of 28 and more):
// rows of 16-lane vectors with a guarded tail (52, 61 -> 31), a row-divisor vector (30), stride
// 2, a channel multiplier of 2 (each plane's padded input read by two output channels), and
// a symbolic batch; one image with small planes keeps the whole padded input (7).
TEST_F(NnKernels, Conv2dDepthwisePaddedPerPlane) {
  check_conv({{1, 5, 9, 52}, {5, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 5, false, ""}, rng, n);
  check_conv({{1, 6, 11, 61}, {6, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 6, false, ""}, rng, n);
  check_conv({{3, 4, 8, 30}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, false, ""}, rng, n);
  check_conv({{2, 7, 13, 13}, {7, 1, 5, 5}, {2, 2}, {2, 1, 2, 2}, {1, 1}, 7, true, ""}, rng, n);
  check_conv({{1, 9, 7, 7}, {9, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 9, false, ""}, rng, n);
}
// Depthwise stride 1 with short rows along the flattened padded plane (conv2d_depthwise_flat.h):
// 7x7 and 28x28 planes, a 5x5 window with uneven padding, no padding, a symbolic batch, and a
// row of 48 that keeps the row schedule.
TEST_F(NnKernels, Conv2dDepthwiseFlatPlanes) {
  check_conv({{1, 5, 7, 7}, {5, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 5, false, "conv2d_flat"}, rng, n);
  check_conv({{2, 3, 28, 28}, {3, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3, true, "conv2d_flat"}, rng, n);
  check_conv({{1, 4, 9, 11}, {4, 1, 5, 5}, {1, 1}, {2, 1, 0, 2}, {1, 1}, 4, false, "conv2d_flat"}, rng, n);
  check_conv({{1, 6, 6, 13}, {6, 1, 3, 2}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 6, false, "conv2d_flat"}, rng, n);
  check_conv({{1, 2, 5, 48}, {2, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, false, ""}, rng, n);
  // Stride 2: 14 -> 7, 28 -> 14 (symbolic batch), an odd padded row (13 + 2) widened to 16, a
  // 5x5 window with uneven padding, an odd number of rows.
  check_conv({{1, 5, 14, 14}, {5, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 5, false, "conv2d_flat"}, rng, n);
  check_conv({{2, 3, 28, 28}, {3, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 3, true, "conv2d_flat"}, rng, n);
  check_conv({{1, 4, 11, 13}, {4, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 4, false, "conv2d_flat"}, rng, n);
  check_conv({{1, 3, 12, 9}, {3, 1, 5, 5}, {2, 2}, {2, 1, 1, 2}, {1, 1}, 3, false, "conv2d_flat"}, rng, n);
}
TEST_F(NnKernels, Conv2dFewOutputChannelsRowSchedule) {
  check_conv({{1, 5, 9, 21}, {3, 5, 2, 3}, {1, 1}, {0, 1, 1, 0}, {1, 1}, 1, false, ""}, rng, n);
}
// Few input channels (conv2d_few_channels.cc): grids that the tiles do not divide, a prepacked
// weight, mixed strides with asymmetric padding and 3 output channels; a symbolic batch keeps
// the NCHWc tile.
TEST_F(NnKernels, Conv2dFewInputChannels) {
  check_conv({{1, 3, 37, 53}, {8, 3, 5, 5}, {2, 2}, {2, 2, 2, 2}, {1, 1}, 1, false, "conv_few_channels"}, rng, n);
  check_conv({{2, 4, 30, 31}, {32, 4, 7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, false, "conv_few_channels", 16}, rng, n);
  check_conv({{1, 2, 23, 41}, {3, 2, 3, 3}, {2, 1}, {1, 0, 2, 1}, {1, 1}, 1, false, "conv_few_channels"}, rng, n);
  check_conv({{2, 3, 12, 12}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true, "conv_blocked"}, rng, n);
}
TEST_F(NnKernels, Conv2dOneByOne) {
  check_conv({{2, 64, 7, 7}, {48, 64, 1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, "conv_blocked"}, rng, n);
}

TEST_F(NnKernels, Conv2dPrepackedWeight) {
  // The NCHWc schedule with the compile-time layout, and the row schedule reading a packed weight.
  check_conv({{2, 37, 12, 12}, {64, 37, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, "conv_blocked", 32}, rng, n);
  check_conv({{1, 16, 9, 9}, {32, 16, 3, 3}, {2, 2}, {0, 1, 1, 0}, {1, 1}, 1, false, "conv_blocked", 16}, rng, n);
  check_conv({{1, 8, 7, 7}, {6, 4, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2, false, "", 3}, rng, n);
}

TEST_F(NnKernels, PrepackPassRewritesConstantWeights) {
  graph::BlockBuilder b;
  graph::Var x = b.add_param("x", sym({1, 16, 10, 10}, n));
  Data wd = random({32, 16, 3, 3}, rng), dw = random({32, 1, 3, 3}, rng);
  graph::Expr w = graph::Constant::make(to_tensor(wd)), wdw = graph::Constant::make(to_tensor(dw));
  graph::Expr y = b.emit(b.call("nn.conv2d", {x, w}, {{"padding", AttrValue::ints({1, 1, 1, 1})}}), "y");
  graph::Expr z = b.emit(b.call("nn.conv2d", {y, wdw}, {{"groups", AttrValue(32)}}), "z");
  graph::Function f = b.finish(z);
  graph::Function g = prepack_conv2d_weights(f, Target::parse("llvm"));
  ASSERT_EQ(g.bindings().size(), 3u);
  const auto* pack = g.bindings()[0].value.as<graph::CallNode>();
  ASSERT_NE(pack, nullptr);
  EXPECT_EQ(pack->op(), "nn.conv2d_pack_weight");
  const auto* conv = g.bindings()[1].value.as<graph::CallNode>();
  EXPECT_EQ(graph::get_string(conv->attrs(), "kernel_layout"),
            "OIHW" + std::to_string(graph::get_int(pack->attrs(), "block")) + "o");
  EXPECT_TRUE(graph::type_equal(conv->type(), f.bindings()[0].value.type()));
  // The depthwise conv keeps its OIHW weight.
  EXPECT_EQ(graph::get_string(g.bindings()[2].value.as<graph::CallNode>()->attrs(), "kernel_layout", "OIHW"), "OIHW");
}

// Constant dense / matmul weights become nn.dense(x, nn.dense_pack_weight(w), weight_layout
// packed) with the call's type kept; a non-constant weight and a 1-d data are left alone.
TEST_F(NnKernels, PrepackPassRewritesConstantDenseAndMatmulWeights) {
  graph::BlockBuilder b;
  graph::Var x = b.add_param("x", sym({0, 40}, n));
  graph::Var v = b.add_param("v", Type::tensor({ir::int_imm(40)}, f32));
  graph::Var wp = b.add_param("wp", Type::tensor({ir::int_imm(40), ir::int_imm(24)}, f32));
  graph::Expr wnk = graph::Constant::make(to_tensor(random({33, 40}, rng)));
  graph::Expr wkn = graph::Constant::make(to_tensor(random({40, 24}, rng)));
  graph::Expr d = b.emit(b.call("nn.dense", {x, wnk}), "d");
  graph::Expr m = b.emit(b.call("matmul", {x, wkn}), "m");
  graph::Expr p = b.emit(b.call("matmul", {x, wp}), "p");  // weight not constant
  graph::Expr q = b.emit(b.call("matmul", {v, wkn}), "q");  // 1-d data
  graph::Function f = b.finish(b.emit(b.call("add", {m, p}), "r"));
  graph::Function g = prepack_conv2d_weights(f, Target::parse("llvm"));
  ASSERT_EQ(g.bindings().size(), 7u);
  for (int i : {0, 2}) {
    const auto* pack = g.bindings()[i].value.as<graph::CallNode>();
    const auto* dense = g.bindings()[i + 1].value.as<graph::CallNode>();
    ASSERT_NE(pack, nullptr);
    EXPECT_EQ(pack->op(), "nn.dense_pack_weight");
    EXPECT_EQ(graph::get_string(pack->attrs(), "layout"), i == 0 ? "NK" : "KN");
    EXPECT_EQ(dense->op(), "nn.dense");
    EXPECT_EQ(graph::get_string(dense->attrs(), "weight_layout"), "packed");
    EXPECT_TRUE(graph::type_equal(dense->type(), f.bindings()[i / 2].value.type()));
  }
  EXPECT_EQ(g.bindings()[4].value.as<graph::CallNode>()->op(), "matmul");
  EXPECT_EQ(g.bindings()[5].value.as<graph::CallNode>()->op(), "matmul");
}

// The schedules with an elementwise epilogue after the anchor (the fused-group form) compute
// relu(op) equal to relu of the plain kernel's result (itself checked above).
TEST_F(NnKernels, SchedulesTakeAnElementwiseEpilogue) {
  struct Case {
    std::string op;
    std::vector<Shape> shapes;
    Attrs attrs;
    Shape out;
  };
  std::vector<Case> cases = {
      {"nn.conv2d", {{2, 16, 9, 9}, {32, 16, 3, 3}}, {{"padding", AttrValue::ints({1, 1, 1, 1})}}, {2, 32, 9, 9}},
      {"nn.conv2d",
       {{1, 12, 9, 9}, {12, 1, 3, 3}},
       {{"groups", AttrValue(12)}, {"strides", AttrValue::ints({2, 2})}},
       {1, 12, 4, 4}},
      {"nn.max_pool2d", {{1, 3, 9, 9}}, {{"pool_size", AttrValue::ints({3, 3})}}, {1, 3, 7, 7}},
      {"nn.avg_pool2d",
       {{1, 3, 9, 9}},
       {{"pool_size", AttrValue::ints({2, 2})}, {"strides", AttrValue::ints({2, 2})}},
       {1, 3, 4, 4}},
      {"matmul", {{13, 29}, {29, 41}}, {}, {13, 41}},
      {"matmul", {{2, 7, 9}, {2, 9, 11}}, {}, {2, 7, 11}},
      {"nn.dense", {{2, 5, 40}, {33, 40}}, {}, {2, 5, 33}},
  };
  for (const Case& c : cases) {
    std::vector<Type> types;
    std::vector<Data> ins;
    for (const Shape& sh : c.shapes) {
      types.push_back(Type::tensor(sh, f32));
      ins.push_back(random(sh, rng));
    }
    Kernel plain = build(c.op, types, c.attrs), fused = build_with_relu(c.op, types, c.attrs);
    std::vector<float> p = run(plain, ins, c.out), f = run(fused, ins, c.out);
    std::vector<double> want;
    for (float v : p) want.push_back(std::max(v, 0.0f));
    expect_close(f, want, {}, c.op + " + relu (" + fused.impl + ")");
  }
}

// ---- dense / matmul ----------------------------------------------------------------------
// a [B..., M, K] (broadcast batch), b [B..., K, N] or dense weight [N, K].
std::vector<double> matmul_ref(const Data& a, const Data& b, bool dense, const Shape& out, std::vector<double>& scale) {
  const int64_t K = a.shape.back();
  const int64_t M = a.shape.size() >= 2 ? a.shape[a.shape.size() - 2] : 1;
  const int64_t N = dense ? b.shape[0] : (b.shape.size() >= 2 ? b.shape.back() : 1);
  const int64_t batches = numel(out) / (M * N);
  std::vector<double> want;
  for (int64_t bt = 0; bt < batches; ++bt)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        // The operand's batch offset: broadcast from the right over the output's batch dims.
        auto offset = [&](const Shape& s, int64_t matrix) {
          if (s.size() <= 2) return int64_t(0);
          Shape ob(out.begin(), out.end() - 2);
          int64_t off = 0, stride = 1, rem = bt;
          std::vector<int64_t> coord(ob.size());
          for (size_t d = ob.size(); d-- > 0;) coord[d] = rem % ob[d], rem /= ob[d];
          for (size_t d = s.size() - 2; d-- > 0;) {
            int64_t od = int64_t(ob.size()) - int64_t(s.size() - 2) + int64_t(d);
            off += (s[d] == 1 ? 0 : coord[od]) * stride;
            stride *= s[d];
          }
          return off * matrix;
        };
        const int64_t ao = dense ? bt * M * K : offset(a.shape, M * K), bo = dense ? 0 : offset(b.shape, K * N);
        double acc = 0, abs = 0;
        for (int64_t k = 0; k < K; ++k) {
          double p = double(a.v[ao + i * K + k]) * (dense ? b.v[j * K + k] : b.v[bo + k * N + j]);
          acc += p;
          abs += std::fabs(p);
        }
        want.push_back(acc);
        scale.push_back(abs);
      }
  return want;
}

// ref_a / ref_out: the shapes the reference sees (1-d promotion: a [K] as [1, K]).
void check_matmul(const std::string& op, const Shape& as, const Shape& bs, const Shape& out, bool symbolic,
                  std::mt19937& rng, const ir::Var& n, const Shape& ref_a = {}, const Shape& ref_out = {}) {
  std::vector<Type> types = {symbolic ? sym(as, n) : Type::tensor(as, f32),
                             symbolic && op == "matmul" ? sym(bs, n) : Type::tensor(bs, f32)};
  Kernel k = build(op, types, {});
  Data a = random(as, rng), b = random(bs, rng);
  std::vector<double> scale;
  Data ra = a;
  if (!ref_a.empty()) ra.shape = ref_a;
  std::vector<double> want = matmul_ref(ra, b, op == "nn.dense", ref_out.empty() ? out : ref_out, scale);
  expect_close(run(k, {a, b}, out, {{"n", as[0]}}), want, scale, op + " " + k.impl);
}

TEST_F(NnKernels, DenseStaticSymbolicAndKBlocks) {
  check_matmul("nn.dense", {37, 70}, {50, 70}, {37, 50}, false, rng, n);
  check_matmul("nn.dense", {3, 5, 40}, {33, 40}, {3, 5, 33}, true, rng, n);
  check_matmul("nn.dense", {9, 300}, {20, 300}, {9, 20}, false, rng, n);
  check_matmul("nn.dense", {5, 300}, {37, 300}, {5, 37}, true, rng, n);
  check_matmul("nn.dense", {1, 512}, {100, 512}, {1, 100}, false, rng, n);
}

TEST_F(NnKernels, MatmulTwoDBatchedBroadcastAndPromoted) {
  check_matmul("matmul", {13, 29}, {29, 41}, {13, 41}, false, rng, n);
  check_matmul("matmul", {2, 1, 7, 9}, {3, 9, 11}, {2, 3, 7, 11}, false, rng, n);
  check_matmul("matmul", {2, 4, 6, 8}, {2, 4, 8, 10}, {2, 4, 6, 10}, true, rng, n);
  check_matmul("matmul", {9}, {2, 9, 5}, {2, 5}, false, rng, n, {1, 9}, {2, 1, 5});
}

// ---- pools -------------------------------------------------------------------------------
struct Pool {
  Shape x;
  std::vector<int64_t> k, strides, pad, dil{1, 1};
  bool ceil_mode = false, include_pad = false;
};

void check_pool(const std::string& op, const Pool& p, std::mt19937& rng, bool symbolic, const ir::Var& n) {
  Attrs a{{"pool_size", AttrValue::ints(p.k)},   {"strides", AttrValue::ints(p.strides)},
          {"padding", AttrValue::ints(p.pad)},   {"dilation", AttrValue::ints(p.dil)},
          {"ceil_mode", AttrValue(p.ceil_mode)}, {"count_include_pad", AttrValue(p.include_pad)}};
  Kernel k = build(op, {symbolic ? sym(p.x, n) : Type::tensor(p.x, f32)}, a);
  const int64_t N = p.x[0], C = p.x[1], H = p.x[2], W = p.x[3];
  auto osize = [&](int64_t in, int d) {
    int64_t span = p.dil[d] * (p.k[d] - 1) + 1, room = in + p.pad[d] + p.pad[d + 2] - span;
    int64_t o = (p.ceil_mode ? (room + p.strides[d] - 1) / p.strides[d] : room / p.strides[d]) + 1;
    if (p.ceil_mode && (o - 1) * p.strides[d] >= in + p.pad[d]) --o;
    return o;
  };
  const int64_t OH = osize(H, 0), OW = osize(W, 1);
  Data x = random(p.x, rng);
  std::vector<double> want;
  const bool is_max = op == "nn.max_pool2d";
  for (int64_t b = 0; b < N; ++b)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < OH; ++y)
        for (int64_t q = 0; q < OW; ++q) {
          double acc = is_max ? -INFINITY : 0;
          int64_t count = 0;
          for (int64_t r = 0; r < p.k[0]; ++r)
            for (int64_t s = 0; s < p.k[1]; ++s) {
              int64_t iy = y * p.strides[0] + r * p.dil[0] - p.pad[0], ix = q * p.strides[1] + s * p.dil[1] - p.pad[1];
              bool in_padded = iy >= -p.pad[0] && iy < H + p.pad[2] && ix >= -p.pad[1] && ix < W + p.pad[3];
              bool inside = iy >= 0 && iy < H && ix >= 0 && ix < W;
              if (p.include_pad ? in_padded : inside) ++count;
              if (!inside) continue;
              double v = x.v[((b * C + c) * H + iy) * W + ix];
              acc = is_max ? std::max(acc, v) : acc + v;
            }
          want.push_back(is_max ? acc : acc / std::max<int64_t>(count, 1));
        }
  expect_close(run(k, {x}, {N, C, OH, OW}, {{"n", N}}), want, {}, op + " " + k.impl);
}

TEST_F(NnKernels, MaxPool) {
  check_pool("nn.max_pool2d", {{1, 5, 13, 13}, {3, 3}, {2, 2}, {1, 1, 1, 1}}, rng, false, n);
  check_pool("nn.max_pool2d", {{2, 3, 11, 37}, {2, 3}, {1, 2}, {0, 1, 1, 0}, {2, 1}, true}, rng, true, n);
}

TEST_F(NnKernels, AvgPoolCeilModeAndCountIncludePad) {
  check_pool("nn.avg_pool2d", {{1, 4, 13, 13}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, false}, rng, false, n);
  check_pool("nn.avg_pool2d", {{1, 4, 13, 13}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true}, rng, false, n);
  check_pool("nn.avg_pool2d", {{2, 3, 10, 10}, {3, 3}, {2, 2}, {0, 0, 1, 1}, {1, 1}, true, true}, rng, true, n);
  check_pool("nn.avg_pool2d", {{2, 3, 10, 10}, {3, 2}, {2, 2}, {1, 0, 0, 1}, {1, 1}, true, false}, rng, false, n);
}

TEST_F(NnKernels, GlobalPools) {
  for (const char* op : {"nn.global_avg_pool2d", "nn.global_max_pool2d"}) {
    Shape s = {3, 37, 7, 7};
    Kernel k = build(op, {sym(s, n)}, {});
    Data x = random(s, rng);
    std::vector<double> want;
    for (int64_t p = 0; p < 3 * 37; ++p) {
      double acc = std::string(op) == "nn.global_max_pool2d" ? -INFINITY : 0;
      for (int64_t i = 0; i < 49; ++i)
        acc =
            std::string(op) == "nn.global_max_pool2d" ? std::max(acc, double(x.v[p * 49 + i])) : acc + x.v[p * 49 + i];
      want.push_back(std::string(op) == "nn.global_max_pool2d" ? acc : acc / 49);
    }
    expect_close(run(k, {x}, {3, 37, 1, 1}, {{"n", 3}}), want, {}, op);
  }
}

// ---- normalisations and softmax ----------------------------------------------------------
// Mean and variance of data[o, i] for each o over the inner index i (data viewed [outer, inner]).
void moments(const std::vector<float>& v, int64_t outer, int64_t inner, int64_t o, double& mean, double& var) {
  mean = 0, var = 0;
  for (int64_t i = 0; i < inner; ++i) mean += v[o * inner + i];
  mean /= inner;
  for (int64_t i = 0; i < inner; ++i) var += (v[o * inner + i] - mean) * (v[o * inner + i] - mean);
  var /= inner;
  (void)outer;
}

TEST_F(NnKernels, BatchNorm) {
  Shape s = {2, 37, 5, 3};
  Kernel k = build("nn.batch_norm", {sym(s, n), ts({37}, f32), ts({37}, f32), ts({37}, f32), ts({37}, f32)},
                   {{"epsilon", AttrValue(1e-3)}});
  Data x = random(s, rng), g = random({37}, rng), b = random({37}, rng), m = random({37}, rng),
       v = random({37}, rng, 0.1f, 2.0f);
  std::vector<double> want;
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t c = (i / 15) % 37;
    want.push_back((x.v[i] - m.v[c]) / std::sqrt(v.v[c] + 1e-3) * g.v[c] + b.v[c]);
  }
  expect_close(run(k, {x, g, b, m, v}, s, {{"n", 2}}), want, {}, "batch_norm");
}

// Row lengths 37 (one scalar reduction) and 64 (a multiple of the vector: lane partials, then the lanes).
TEST_F(NnKernels, LayerNormAndRmsNorm) {
  for (const int64_t L : {37, 64}) {
    Shape s = {3, 5, L};
    Data x = random(s, rng), g = random({L}, rng), b = random({L}, rng);
    Kernel k = build("nn.layer_norm", {sym(s, n), ts({L}, f32), ts({L}, f32)},
                     {{"axis", AttrValue(-1)}, {"epsilon", AttrValue(1e-5)}});
    std::vector<double> want, want_rms;
    for (int64_t o = 0; o < 15; ++o) {
      double mean, var, ms = 0;
      moments(x.v, 15, L, o, mean, var);
      for (int64_t i = 0; i < L; ++i) ms += double(x.v[o * L + i]) * x.v[o * L + i];
      ms /= double(L);
      for (int64_t i = 0; i < L; ++i) {
        want.push_back((x.v[o * L + i] - mean) / std::sqrt(var + 1e-5) * g.v[i] + b.v[i]);
        want_rms.push_back(x.v[o * L + i] / std::sqrt(ms + 1e-5) * g.v[i]);
      }
    }
    expect_close(run(k, {x, g, b}, s, {{"n", 3}}), want, {}, "layer_norm " + std::to_string(L));
    Kernel r = build("nn.rms_norm", {sym(s, n), ts({L}, f32)}, {{"axis", AttrValue(2)}, {"epsilon", AttrValue(1e-5)}});
    expect_close(run(r, {x, g}, s, {{"n", 3}}), want_rms, {}, "rms_norm " + std::to_string(L));
    // Over the last two dims, without beta.
    Data g2 = random({5, L}, rng);
    Kernel k2 = build("nn.layer_norm", {Type::tensor(s, f32), ts({5, L}, f32)}, {{"axis", AttrValue(1)}});
    std::vector<double> want2;
    for (int64_t o = 0; o < 3; ++o) {
      double mean, var;
      moments(x.v, 3, 5 * L, o, mean, var);
      for (int64_t i = 0; i < 5 * L; ++i)
        want2.push_back((x.v[o * 5 * L + i] - mean) / std::sqrt(var + 1e-5) * g2.v[i]);
    }
    expect_close(run(k2, {x, g2}, s), want2, {}, "layer_norm axis 1");
  }
}

TEST_F(NnKernels, InstanceAndGroupNorm) {
  Shape s = {2, 6, 5, 7};
  Data x = random(s, rng), g = random({6}, rng), b = random({6}, rng);
  Kernel k = build("nn.instance_norm", {sym(s, n), ts({6}, f32), ts({6}, f32)}, {{"epsilon", AttrValue(1e-5)}});
  std::vector<double> want;
  for (int64_t o = 0; o < 12; ++o) {
    double mean, var;
    moments(x.v, 12, 35, o, mean, var);
    for (int64_t i = 0; i < 35; ++i)
      want.push_back((x.v[o * 35 + i] - mean) / std::sqrt(var + 1e-5) * g.v[o % 6] + b.v[o % 6]);
  }
  expect_close(run(k, {x, g, b}, s, {{"n", 2}}), want, {}, "instance_norm");
  // group_norm over W = 7 (one reduction) and W = 64 (lane partials over the last dim, then the lanes).
  for (const int64_t W : {7, 64}) {
    Shape sg = {2, 6, 5, W};
    Data xg = random(sg, rng);
    const int64_t per = 2 * 5 * W, plane = 5 * W;
    Kernel gn = build("nn.group_norm", {Type::tensor(sg, f32), ts({6}, f32), ts({6}, f32)},
                      {{"num_groups", AttrValue(3)}, {"epsilon", AttrValue(1e-5)}});
    std::vector<double> want_g;
    for (int64_t o = 0; o < 6; ++o) {  // (n, group): 2 channels x 5 x W
      double mean, var;
      moments(xg.v, 6, per, o, mean, var);
      for (int64_t i = 0; i < per; ++i) {
        int64_t c = (o % 3) * 2 + i / plane;
        want_g.push_back((xg.v[o * per + i] - mean) / std::sqrt(var + 1e-5) * g.v[c] + b.v[c]);
      }
    }
    expect_close(run(gn, {xg, g, b}, sg), want_g, {}, "group_norm W " + std::to_string(W));
  }
}

TEST_F(NnKernels, Lrn) {
  Shape s = {2, 7, 3, 4};
  Data x = random(s, rng);
  const double alpha = 1e-2, beta = 0.75, bias = 2.0;
  Kernel k = build(
      "nn.lrn", {Type::tensor(s, f32)},
      {{"size", AttrValue(4)}, {"alpha", AttrValue(alpha)}, {"beta", AttrValue(beta)}, {"bias", AttrValue(bias)}});
  std::vector<double> want;
  for (int64_t i = 0; i < numel(s); ++i) {
    int64_t c = (i / 12) % 7, base = i - c * 12;
    double sq = 0;
    for (int64_t cc = c - 1; cc <= c + 2; ++cc)
      if (cc >= 0 && cc < 7) sq += double(x.v[base + cc * 12]) * x.v[base + cc * 12];
    want.push_back(x.v[i] / std::pow(bias + alpha / 4 * sq, beta));
  }
  expect_close(run(k, {x}, s), want, {}, "lrn");
}

TEST_F(NnKernels, SoftmaxAndLogSoftmax) {
  for (const int64_t L : {37, 48}) {  // 48: lane partials (see LayerNormAndRmsNorm)
    Shape s = {3, 4, L};
    Data x = random(s, rng, -20, 20);  // large values: the max subtraction matters
    for (int64_t axis : {-1, 1}) {
      for (bool log : {false, true}) {
        Kernel k = build(log ? "nn.log_softmax" : "nn.softmax", {sym(s, n)}, {{"axis", AttrValue(axis)}});
        const int64_t len = axis == -1 ? L : 4, stride = axis == -1 ? 1 : L;
        std::vector<double> want(size_t(numel(s)));
        for (int64_t i = 0; i < numel(s); ++i) {
          int64_t pos = (i / stride) % len, base = i - pos * stride;
          double mx = -INFINITY, sum = 0;
          for (int64_t j = 0; j < len; ++j) mx = std::max(mx, double(x.v[base + j * stride]));
          for (int64_t j = 0; j < len; ++j) sum += std::exp(x.v[base + j * stride] - mx);
          want[i] = log ? x.v[i] - mx - std::log(sum) : std::exp(x.v[i] - mx) / sum;
        }
        expect_close(run(k, {x}, s, {{"n", 3}}), want, {},
                     std::string(log ? "log_softmax" : "softmax") + " axis " + std::to_string(axis) + " length " +
                         std::to_string(L));
      }
    }
  }
}

// ---- float16: matmul and softmax compute in float32 -----------------------------------------
// Inputs rounded to half; the reference in double from those halves, rounded once to half. A
// float16 accumulation (K = 64 products, a sum of 37 exps) misses by many half ulps.
std::vector<double> run_half(Kernel& k, const std::vector<Data>& ins, const Shape& out_shape,
                             const std::map<std::string, int64_t>& dims) {
  const DataType f16 = DataType::float16();
  std::vector<Value> args;
  std::vector<Tensor> keep;
  for (const Data& d : ins) {
    keep.push_back(Tensor::empty(std::span<const int64_t>(d.shape), f16));
    for (size_t i = 0; i < d.v.size(); ++i)
      static_cast<uint16_t*>(keep.back().data())[i] = ir::double_to_half_bits(d.v[i]);
  }
  keep.push_back(Tensor::empty(std::span<const int64_t>(out_shape), f16));
  for (const Tensor& t : keep) args.emplace_back(t);
  for (const ir::Var& v : k.lowered.shape_vars) args.emplace_back(static_cast<int32_t>(dims.at(v->name())));
  k.module["kernel"].call(Args(args.data(), args.size()));
  std::vector<double> out;
  for (int64_t i = 0; i < numel(out_shape); ++i)
    out.push_back(ir::half_bits_to_double(static_cast<const uint16_t*>(keep.back().data())[i]));
  return out;
}

Data rounded_to_half(Data d) {
  for (float& x : d.v) x = static_cast<float>(ir::round_to_half(x));
  return d;
}

// Within one half ulp of the rounded reference (2^-10 relative) plus float32's own error.
void expect_half_close(const std::vector<double>& got, const std::vector<double>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double w = ir::round_to_half(want[i]), tol = std::fabs(w) * 0x1p-10 + 1e-7;
    if (!(std::fabs(got[i] - w) <= tol) && ++bad <= 5)
      ADD_FAILURE() << what << " at " << i << ": got " << got[i] << ", want " << w << " (seed " << kSeed << ")";
  }
  EXPECT_EQ(bad, 0) << what;
}

TEST_F(NnKernels, HalfMatmulAndSoftmaxComputeInFloat32) {
  const DataType f16 = DataType::float16();
  {
    Shape as = {2, 3, 64}, bs = {2, 64, 9}, out = {2, 3, 9};
    Kernel k = build("matmul", {Type::tensor(as, f16), Type::tensor(bs, f16)}, {});
    Data a = rounded_to_half(random(as, rng)), b = rounded_to_half(random(bs, rng));
    std::vector<double> scale;
    expect_half_close(run_half(k, {a, b}, out, {}), matmul_ref(a, b, false, out, scale), "float16 matmul " + k.impl);
  }
  {
    Shape s = {3, 37};
    std::vector<ir::PrimExpr> d = {n, ir::int_imm(37)};
    Kernel k = build("nn.softmax", {Type::tensor(d, f16)}, {{"axis", AttrValue(-1)}});
    Data x = rounded_to_half(random(s, rng, -4, 4));
    std::vector<double> want;
    for (int64_t r = 0; r < 3; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < 37; ++j) mx = std::max(mx, double(x.v[r * 37 + j]));
      for (int64_t j = 0; j < 37; ++j) sum += std::exp(x.v[r * 37 + j] - mx);
      for (int64_t j = 0; j < 37; ++j) want.push_back(std::exp(x.v[r * 37 + j] - mx) / sum);
    }
    expect_half_close(run_half(k, {x}, s, {{"n", 3}}), want, "float16 softmax");
  }
}

// float16 conv2d (the row schedule: depthwise, and 48 channels x 3x3 = 432 products) accumulates
// in float32 and rounds once, as matmul does.
TEST_F(NnKernels, HalfConv2dAccumulatesInFloat32) {
  const DataType f16 = DataType::float16();
  struct Case {
    Shape x, w;
    int64_t groups;
  };
  for (const Case& c : {Case{{2, 4, 1, 11}, {4, 1, 1, 4}, 4}, Case{{1, 48, 6, 7}, {5, 48, 3, 3}, 1}}) {
    Attrs a{{"groups", AttrValue(c.groups)}};
    Kernel k = build("nn.conv2d", {Type::tensor(c.x, f16), Type::tensor(c.w, f16)}, a);
    Data x = rounded_to_half(random(c.x, rng)), w = rounded_to_half(random(c.w, rng));
    const int64_t N = c.x[0], H = c.x[2], W = c.x[3], O = c.w[0], Cg = c.w[1], R = c.w[2], S = c.w[3];
    const int64_t OH = H - R + 1, OW = W - S + 1, og = O / c.groups;
    std::vector<double> want;
    for (int64_t b = 0; b < N; ++b)
      for (int64_t o = 0; o < O; ++o)
        for (int64_t y = 0; y < OH; ++y)
          for (int64_t q = 0; q < OW; ++q) {
            double acc = 0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t r = 0; r < R; ++r)
                for (int64_t s2 = 0; s2 < S; ++s2) {
                  int64_t ch = (o / og) * Cg + ci;
                  acc += double(x.v[((b * c.x[1] + ch) * H + y + r) * W + q + s2]) *
                         double(w.v[((o * Cg + ci) * R + r) * S + s2]);
                }
            want.push_back(acc);
          }
    expect_half_close(run_half(k, {x, w}, {N, O, OH, OW}, {}), want, "float16 conv2d " + k.impl);
  }
}

// ---- speed against a naive loop (printed, not asserted) ---------------------------------
TEST_F(NnKernels, Conv2dSpeedAgainstNaiveLoop) {
  Shape xs = {1, 64, 56, 56}, ws = {64, 64, 3, 3};
  Attrs a{{"padding", AttrValue::ints({1, 1, 1, 1})}};
  Kernel k = build("nn.conv2d", {Type::tensor(xs, f32), Type::tensor(ws, f32)}, a);
  Data x = random(xs, rng), w = random(ws, rng);
  double t = 0;
  run(k, {x, w}, {1, 64, 56, 56}, {}, 1);
  run(k, {x, w}, {1, 64, 56, 56}, {}, 5, &t);
  std::vector<float> out(64 * 56 * 56);
  auto t0 = std::chrono::steady_clock::now();
  for (int o = 0; o < 64; ++o)
    for (int y = 0; y < 56; ++y)
      for (int q = 0; q < 56; ++q) {
        float acc = 0;
        for (int c = 0; c < 64; ++c)
          for (int r = 0; r < 3; ++r)
            for (int s = 0; s < 3; ++s) {
              int iy = y + r - 1, ix = q + s - 1;
              if (iy >= 0 && iy < 56 && ix >= 0 && ix < 56)
                acc += x.v[(c * 56 + iy) * 56 + ix] * w.v[((o * 64 + c) * 3 + r) * 3 + s];
            }
        out[(o * 56 + y) * 56 + q] = acc;
      }
  double naive = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gflop = 2.0 * 64 * 56 * 56 * 64 * 9 / 1e9;
  std::printf("conv2d 64x56x56 3x3 (%s): %.3f ms (%.1f GFLOP/s), naive C++ loop %.3f ms (%.1f GFLOP/s)\n",
              k.impl.c_str(), t * 1e3, gflop / t, naive * 1e3, gflop / naive);
  EXPECT_GT(out[0] + 1, -1e30f);
  // ResNet-18's last 3x3 layer: the weight packed inside every call vs prepacked at compile time.
  Shape x7 = {1, 512, 7, 7}, w7 = {512, 512, 3, 3};
  Data xd = random(x7, rng), wd = random(w7, rng);
  Kernel inside = build("nn.conv2d", {ts(x7, f32), ts(w7, f32)}, a);
  Attrs pa = a;
  pa["kernel_layout"] = AttrValue("OIHW32o");
  Kernel pre = build("nn.conv2d", {ts(x7, f32), ts({16, 512, 3, 3, 32}, f32)}, pa);
  Kernel pack = build("nn.conv2d_pack_weight", {ts(w7, f32)}, {{"block", AttrValue(32)}});
  Data wp{{16, 512, 3, 3, 32}, run(pack, {wd}, {16, 512, 3, 3, 32})};
  double t_in = 0, t_pre = 0;
  run(inside, {xd, wd}, x7, {}, 2, &t_in);
  run(inside, {xd, wd}, x7, {}, 5, &t_in);
  run(pre, {xd, wp}, x7, {}, 2, &t_pre);
  run(pre, {xd, wp}, x7, {}, 5, &t_pre);
  const double g7 = 2.0 * 512 * 49 * 512 * 9 / 1e9;
  std::printf(
      "conv2d 512x7x7 3x3: weight packed in the kernel %.3f ms (%.1f GFLOP/s), prepacked %.3f ms (%.1f GFLOP/s)\n",
      t_in * 1e3, g7 / t_in, t_pre * 1e3, g7 / t_pre);
}

}  // namespace
}  // namespace anvil::ops
