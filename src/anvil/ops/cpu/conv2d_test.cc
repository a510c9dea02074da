// conv2d NCHW with its default x86 schedule, built for the "llvm" target (JIT) and compared with
// a naive double reference: ResNet-18's layer kinds (7x7 s2, 3x3 s1 and s2, 1x1 s2) with the
// spatial sizes cut so the suite stays fast, weights prepacked and packed inside the kernel, and
// a column tile that does not divide the output width; tiles for AVX2 and SSE targets (built
// for narrower vectors than the host has, and run here).
// Inputs: uniform [-1, 1) from the fixed seed kSeed (printed on failure). Tolerance: the float32
// summation bound |got - ref| <= n·u·Σ|d·w| + 1e-6, n = C·R·S terms, u = 2^-24.
#include "anvil/ops/cpu/conv2d.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/tensor.h"
#include "anvil/target/target.h"
#include "anvil/tir/printer.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::ops {
namespace {

constexpr uint32_t kSeed = 20261130;

Tensor random_tensor(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = Tensor::empty(std::span<const int64_t>(shape), DataType::float32());
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) static_cast<float*>(t.data())[i] = dist(rng);
  return t;
}

// Builds, runs and checks one conv2d; returns the number of mismatching elements.
void check_conv2d(const Conv2dShape& s, const Conv2dSchedule& config, const std::string& target = "llvm") {
  SCOPED_TRACE(s.to_string() + " oc_block " + std::to_string(config.oc_block) + " ow_block " +
               std::to_string(conv2d_ow_block(s, config)) + (config.pack_weight_in_kernel ? " packing" : " prepacked") +
               " target '" + target + "' seed " + std::to_string(kSeed));
  Conv2d conv = conv2d_nchw(s, config);
  te::Schedule sched = schedule_conv2d_nchw_x86(conv, s, config);
  Module m = pipeline::build(sched, conv.args(), Target::parse(target), "conv2d");
  const int N = s.batch, C = s.in_channels, H = s.height, W = s.width, K = s.out_channels;
  const int R = s.kernel_h, S = s.kernel_w, OH = s.out_height(), OW = s.out_width();
  std::mt19937 rng(kSeed);
  Tensor data = random_tensor({N, C, H, W}, rng), weight = random_tensor({K, C, R, S}, rng);
  Tensor out = Tensor::empty({N, K, OH, OW}, DataType::float32());
  std::memset(out.data(), 0xff, sizeof(float) * N * K * OH * OW);  // NaNs: every element must be written
  const float* d = static_cast<const float*>(data.data());
  const float* w = static_cast<const float*>(weight.data());
  if (config.pack_weight_in_kernel) {
    m["conv2d"](data, weight, out);
  } else {
    std::vector<float> packed = pack_conv2d_weight(s, w, config.oc_block);
    Tensor wp = Tensor::empty({K / config.oc_block, C, R, S, config.oc_block}, DataType::float32());
    std::memcpy(wp.data(), packed.data(), packed.size() * sizeof(float));
    m["conv2d"](data, wp, out);
  }
  const float* o = static_cast<const float*>(out.data());
  const double unit = std::ldexp(1.0, -24) * C * R * S;
  int bad = 0;
  for (int b = 0; b < N; ++b)
    for (int k = 0; k < K; ++k)
      for (int y = 0; y < OH; ++y)
        for (int x = 0; x < OW; ++x) {
          double ref = 0, abs_sum = 0;
          for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
              for (int q = 0; q < S; ++q) {
                int iy = y * s.stride + r - s.pad, ix = x * s.stride + q - s.pad;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                double p = double(d[((b * C + c) * H + iy) * W + ix]) * w[((k * C + c) * R + r) * S + q];
                ref += p;
                abs_sum += std::fabs(p);
              }
          float got = o[((b * K + k) * OH + y) * OW + x];
          if (!(std::fabs(got - ref) <= unit * abs_sum + 1e-6) && ++bad <= 5)
            ADD_FAILURE() << "out[" << b << "," << k << "," << y << "," << x << "] = " << got << ", want " << ref;
        }
  EXPECT_EQ(bad, 0);
}

Conv2dShape shape(int c, int hw, int k, int r, int stride, int pad) {
  Conv2dShape s;
  s.in_channels = c;
  s.height = s.width = hw;
  s.out_channels = k;
  s.kernel_h = s.kernel_w = r;
  s.stride = stride;
  s.pad = pad;
  return s;
}

TEST(OpsConv2d, Resnet18StemSevenBySevenStride2) { check_conv2d(shape(3, 30, 64, 7, 2, 3), {}); }
TEST(OpsConv2d, Resnet18ThreeByThreeStride1) { check_conv2d(shape(64, 14, 64, 3, 1, 1), {}); }
TEST(OpsConv2d, Resnet18ThreeByThreeStride2) { check_conv2d(shape(64, 14, 128, 3, 2, 1), {}); }
TEST(OpsConv2d, Resnet18OneByOneStride2) { check_conv2d(shape(64, 14, 128, 1, 2, 0), {}); }
TEST(OpsConv2d, Resnet18LateLayersAtFullSize) {
  check_conv2d(shape(256, 14, 512, 3, 2, 1), {});
  check_conv2d(shape(256, 14, 512, 1, 2, 0), {});
  check_conv2d(shape(512, 7, 512, 3, 1, 1), {});
}

TEST(OpsConv2d, WeightPackedInsideTheKernel) {
  Conv2dSchedule config;
  config.pack_weight_in_kernel = true;
  check_conv2d(shape(64, 12, 64, 3, 1, 1), config);
  check_conv2d(shape(3, 16, 32, 7, 2, 3), config);
}

TEST(OpsConv2d, ColumnTileThatDoesNotDivideAndSmallerChannelBlock) {
  Conv2dSchedule config;
  config.ow_block = 4;
  config.oc_block = 16;
  check_conv2d(shape(16, 7, 32, 3, 1, 1), config);  // 7 columns in tiles of 4
  check_conv2d(shape(8, 9, 16, 3, 2, 0), config);   // 4 columns, no padding
}

TEST(OpsConv2d, TileFollowsTheTargetVectorWidth) {
  Conv2dShape s = shape(64, 14, 64, 3, 1, 1);  // out 14x14
  Conv2dSchedule v4 = conv2d_x86_config(s, Target::parse("llvm -mcpu=x86-64-v4"));
  EXPECT_EQ(v4.oc_block, 32);  // 2 zmm
  EXPECT_EQ(v4.max_ow_block, 8);
  EXPECT_EQ(conv2d_ow_block(s, v4), 7);
  Conv2dSchedule defaults;  // AVX-512's tile is the default one
  EXPECT_EQ(v4.oc_block, defaults.oc_block);
  EXPECT_EQ(v4.max_ow_block, defaults.max_ow_block);
  for (const char* avx2 : {"llvm -mcpu=haswell", "llvm -mcpu=x86-64-v4 -mattr=-avx512f", "llvm -mcpu=x86-64-v3"}) {
    SCOPED_TRACE(avx2);
    Conv2dSchedule c = conv2d_x86_config(s, Target::parse(avx2));
    EXPECT_EQ(c.oc_block, 16);  // 2 ymm
    EXPECT_EQ(c.max_ow_block, 6);
  }
  Conv2dSchedule sse = conv2d_x86_config(s, Target::parse("llvm -mcpu=x86-64"));
  EXPECT_EQ(sse.oc_block, 8);  // 2 xmm
  EXPECT_EQ(sse.max_ow_block, 6);
  EXPECT_EQ(conv2d_x86_config(s, Target::parse("llvm -mcpu=x86-64 -mattr=+avx512f")).oc_block, 32);
  // A channel count the two-vector block does not divide gets the largest power-of-two part.
  EXPECT_EQ(conv2d_x86_config(shape(3, 8, 48, 3, 1, 1), Target::parse("llvm -mcpu=x86-64-v4")).oc_block, 16);
  EXPECT_EQ(conv2d_x86_config(shape(3, 8, 12, 3, 1, 1), Target::parse("llvm -mcpu=haswell")).oc_block, 4);
  // The automatic column tile stays within the bound (12 columns: 6 with 16 registers).
  Conv2dSchedule hw = conv2d_x86_config(shape(16, 12, 32, 3, 1, 1), Target::parse("llvm -mcpu=haswell"));
  EXPECT_EQ(conv2d_ow_block(shape(16, 12, 32, 3, 1, 1), hw), 6);
}

// AVX2 and SSE tiles built for narrower targets than the host run (and must be right) here too.
TEST(OpsConv2d, NarrowVectorTargetsMatchTheReference) {
  for (const char* target : {"llvm -mcpu=haswell", "llvm -mcpu=x86-64-v4 -mattr=-avx512f", "llvm -mcpu=x86-64"}) {
    for (const Conv2dShape& s : {shape(16, 7, 64, 3, 1, 1), shape(3, 15, 48, 7, 2, 3), shape(8, 9, 24, 1, 2, 0)}) {
      Conv2dSchedule config = conv2d_x86_config(s, Target::parse(target));
      check_conv2d(s, config, target);
      config.pack_weight_in_kernel = true;
      check_conv2d(s, config, target);
    }
  }
  // The AVX2 tile is AVX2 code: ymm registers, no zmm.
  Conv2dShape s = shape(16, 7, 64, 3, 1, 1);
  Target haswell = Target::parse("llvm -mcpu=haswell");
  Conv2dSchedule config = conv2d_x86_config(s, haswell);
  Conv2d conv = conv2d_nchw(s, config);
  std::string assembly = codegen::llvm_module_source(
      pipeline::build(schedule_conv2d_nchw_x86(conv, s, config), conv.args(), haswell, "conv2d"), "asm");
  EXPECT_NE(assembly.find("ymm"), std::string::npos);
  EXPECT_EQ(assembly.find("zmm"), std::string::npos);
}

// The parallel loops of the lowered kernel in post-order (in statement order when not nested): {loop variable name, extent}.
std::vector<std::pair<std::string, int64_t>> parallel_loops(const Conv2dShape& s, const Conv2dSchedule& config,
                                                            std::string* text = nullptr) {
  Conv2d conv = conv2d_nchw(s, config);
  tir::PrimFunc f = pipeline::lower(schedule_conv2d_nchw_x86(conv, s, config), conv.args(), "conv2d");
  if (text) *text = tir::to_string(f);
  std::vector<std::pair<std::string, int64_t>> loops;
  tir::post_order_visit(f->body(), nullptr, [&](const tir::StmtNode* n) {
    if (n->kind() != tir::StmtKind::kFor) return;
    auto* op = static_cast<const tir::ForNode*>(n);
    if (op->for_kind() == tir::ForKind::kParallel)
      loops.push_back(std::pair<std::string, int64_t>(op->loop_var().name(),
                                                                  ir::as_const_int(op->extent()).value_or(-1)));
  });
  return loops;
}

TEST(OpsConv2d, ParallelTasksPerResnet18Shape) {
  // ResNet-18 at batch 1: 112 or 224 rows (n·ko·y), 16 tasks of 7 or 14 rows; the 1x1 layers
  // with a reduction of 64 or 128 (short) one iteration per row (112: one chunk per thread).
  struct Case {
    Conv2dShape s;
    int rows_per_task, tasks;
  };
  for (const Case& c : {Case{shape(3, 224, 64, 7, 2, 3), 14, 16}, Case{shape(64, 56, 64, 3, 1, 1), 7, 16},
                        Case{shape(64, 56, 128, 3, 2, 1), 7, 16}, Case{shape(64, 56, 128, 1, 2, 0), 1, 112},
                        Case{shape(128, 28, 256, 1, 2, 0), 1, 112}, Case{shape(256, 14, 512, 1, 2, 0), 7, 16},
                        Case{shape(512, 7, 512, 3, 1, 1), 7, 16}}) {
    SCOPED_TRACE(c.s.to_string());
    Conv2dSchedule config;
    EXPECT_EQ(conv2d_rows_per_task(c.s, config), c.rows_per_task);
    std::string text;
    auto loops = parallel_loops(c.s, config, &text);
    // The padding copy (when padded) and the output: one parallel loop each, not nested.
    ASSERT_EQ(loops.size(), c.s.pad > 0 ? 2u : 1u) << text;
    EXPECT_EQ(loops.back().second, c.tasks) << text;
    // Equal tasks: no tail guard in the output loop (the last parallel loop).
    EXPECT_EQ(text.find("if ", text.rfind("parallel:")), std::string::npos) << text;
  }
  // The stem's 3 input planes: the padded rows it reads (3 x 229) in 16 tasks of 43 (a guarded
  // last one), not 3 tasks.
  EXPECT_EQ(parallel_loops(shape(3, 224, 64, 7, 2, 3), {}).front().second, 16);
  EXPECT_EQ(parallel_loops(shape(64, 56, 64, 3, 1, 1), {}).front().second, 64);  // 64 planes
  // Few rows: one row per task. Rows not a multiple of a near divisor: a guarded last task.
  EXPECT_EQ(conv2d_rows_per_task(shape(8, 9, 16, 3, 1, 1), {.oc_block = 16}), 1);
  EXPECT_EQ(parallel_loops(shape(8, 9, 16, 3, 1, 1), {.oc_block = 16}).back().second, 9);
  Conv2dShape odd = shape(16, 131, 32, 3, 1, 1);  // 131 rows (prime): 9 rows per task, 15 tasks
  EXPECT_EQ(conv2d_rows_per_task(odd, {}), 9);
  EXPECT_EQ(parallel_loops(odd, {}).back().second, 15);
  // rows_per_task = 1 keeps one iteration per row (the loop is then cut into chunks per thread).
  Conv2dSchedule one;
  one.rows_per_task = 1;
  EXPECT_EQ(parallel_loops(shape(64, 56, 128, 3, 2, 1), one).back().second, 112);
}

// Tasks that cross channel blocks and batch elements, a guarded last task, small channel counts.
TEST(OpsConv2d, RowTasksMatchTheReference) {
  Conv2dSchedule c16;
  c16.oc_block = 16;
  check_conv2d(shape(3, 13, 16, 3, 1, 1), c16);  // 13 rows, one per task
  Conv2dSchedule c8;
  c8.oc_block = 8;
  c8.rows_per_task = 3;
  check_conv2d(shape(5, 11, 8, 3, 1, 1), c8);   // 11 rows in tasks of 3: guarded tail
  check_conv2d(shape(4, 14, 16, 3, 2, 1), c8);  // 2 blocks x 7 rows, tasks of 3 cross the blocks
  Conv2dSchedule c;
  c.oc_block = 16;
  c.rows_per_task = 5;
  Conv2dShape b = shape(8, 9, 32, 3, 1, 1);
  b.batch = 3;  // 3 x 2 x 9 = 54 rows in tasks of 5, across batch elements
  check_conv2d(b, c);
  c.pack_weight_in_kernel = true;
  check_conv2d(b, c);
  check_conv2d(shape(16, 131, 32, 3, 1, 1), {});  // automatic: 9 rows per task, 15 tasks
}

TEST(OpsConv2d, BadShapesAreValueErrors) {
  Conv2dSchedule config;
  EXPECT_THROW(conv2d_nchw(shape(3, 8, 48, 3, 1, 1), config), Error);  // 32 does not divide 48
  EXPECT_THROW(conv2d_nchw(shape(3, 2, 32, 5, 1, 1), config), Error);  // kernel larger than the input
  EXPECT_THROW(conv2d_nchw(shape(0, 8, 32, 3, 1, 1), config), Error);
}

}  // namespace
}  // namespace anvil::ops
