// vectorize pass: golden text and interpreter checks, fallbacks, and the
// loop_partition -> vectorize pipeline on a non-dividing split.
#include "anvil/tir/passes/vectorize.h"

#include <gtest/gtest.h>

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/loop_partition.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/passes/simplify.h"
#include "anvil/tir/printer.h"

namespace anvil::tir::passes {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::floordiv;
using testing::verified;

PrimFunc saxpy(int lanes, int blocks) {
  Buffer A = decl_buffer({lanes * blocks}, DataType::float32(), "A");
  Buffer B = decl_buffer({lanes * blocks}, DataType::float32(), "B");
  Var io("io"), ii("ii"), x("x", DataType::float32());
  PrimExpr idx = io * lanes + ii;
  Stmt body = make_for(
      io, 0, blocks,
      make_for(ii, 0, lanes,
               let_stmt(x, buffer_load(A, {idx}),
                        buffer_store(B, ir::select(x > 0.0, x * 2.0, buffer_load(B, {idx}) + ir::cast(DataType::float32(), ii)),
                                     {idx})),
               ForKind::kVectorized));
  return make_prim_func("saxpy", {A, B}, body);
}

TEST(Vectorize, RampsBroadcastsAndVectorLoadsStores) {
  PrimFunc f = saxpy(4, 3);
  PrimFunc g = verified(vectorize(verified(f)));
  EXPECT_EQ(to_string(g),
            "func saxpy(A: Buffer(float32, [12]), B: Buffer(float32, [12])):\n"
            "  for io in range(0, 3):\n"
            "    x: float32x4 = A[ramp(io * 4, 1, 4)]\n"
            "    B[ramp(io * 4, 1, 4)] = select(x > broadcast(0.0f, 4), x * broadcast(2.0f, 4), B[ramp(io * 4, 1, 4)] + float32x4(ramp(0, 1, 4)))\n");
  testing::expect_same_results(f, g, {{12}, {12}}, 61);
}

TEST(Vectorize, NonPowerOfTwoLanes) {
  PrimFunc f = saxpy(3, 5);
  PrimFunc g = verified(vectorize(verified(f)));
  EXPECT_NE(to_string(g).find("ramp(io * 3, 1, 3)"), std::string::npos) << to_string(g);
  testing::expect_same_results(f, g, {{15}, {15}}, 62);
}

TEST(Vectorize, FallsBackToSerialWhenTheBodyCannotBeVectorized) {
  Buffer A = decl_buffer({16}, DataType::float32(), "A");
  Buffer S = decl_buffer({1}, DataType::float32(), "S");
  Var i("i"), k("k");
  // An inner loop, a data-dependent if, and a reduction into one element.
  Stmt body = seq({
      make_for(i, 0, 4, make_for(k, 0, 4, buffer_store(A, 1, {i * 4 + k})), ForKind::kVectorized),
      make_for(i, 0, 16, if_then_else(buffer_load(A, {i}) > 0.5, buffer_store(A, 0, {i})), ForKind::kVectorized),
      make_for(i, 0, 16, buffer_store(S, buffer_load(S, {0}) + buffer_load(A, {i}), {0}), ForKind::kVectorized),
  });
  PrimFunc f = make_prim_func("fallback", {A, S}, body);
  PrimFunc g = verified(vectorize(verified(f)));
  EXPECT_EQ(to_string(g).find("vectorized"), std::string::npos) << to_string(g);
  EXPECT_EQ(to_string(g).find("ramp"), std::string::npos) << to_string(g);
  testing::expect_same_results(f, g, {{16}, {1}}, 63);
}

TEST(Vectorize, PartitionedSplitVectorizesTheMainLoop) {
  Var n = ir::size_var("n");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Buffer B = decl_buffer({n}, DataType::float32(), "B");
  Var io("io"), ii("ii");
  PrimExpr idx = io * 8 + ii;
  Stmt body = make_for(io, 0, floordiv(n + 7, 8),
                       make_for(ii, 0, 8, if_then_else(idx < n, buffer_store(B, buffer_load(A, {idx}) + 1.0, {idx})),
                                ForKind::kVectorized));
  PrimFunc f = make_prim_func("add_one", {A, B}, body);
  PrimFunc g = verified(vectorize(verified(simplify(verified(loop_partition(verified(simplify(verified(f)))))))));
  EXPECT_EQ(to_string(g),
            "func add_one(A: Buffer(float32, [n]), B: Buffer(float32, [n])):\n"
            "  for io in range(0, n // 8):\n"
            "    B[ramp(io * 8, 1, 8)] = A[ramp(io * 8, 1, 8)] + broadcast(1.0f, 8)\n"
            "  for io in range(n // 8, (n + 7) // 8):\n"
            "    for ii in range(0, 8):\n"
            "      if io * 8 + ii < n:\n"
            "        B[io * 8 + ii] = A[io * 8 + ii] + 1.0f\n");
  for (int64_t nn : {0, 5, 8, 21})
    testing::expect_same_results(f, g, {{nn}, {nn}}, 64 + static_cast<uint32_t>(nn));
}

}  // namespace
}  // namespace anvil::tir::passes

#include <cstdlib>
#include <random>

#include "anvil/tir/passes/remove_no_op.h"
#include "anvil/tir/passes/unroll.h"

namespace anvil::tir::passes {
namespace {

// Random 2-D elementwise kernels split by a random factor that need not divide the size, run
// through the whole pass order and compared with the original in the interpreter.
TEST(PassPipeline, RandomSplitsMatchTheInterpreter) {
  const uint32_t seed = 7001;
  std::printf("PassPipeline seed=%u\n", seed);
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int vectorized = 0;
  for (int test = 0; test < 40; ++test) {
    Var n = ir::size_var("n"), m = ir::size_var("m");
    Buffer A = decl_buffer({n, m}, DataType::float32(), "A");
    Buffer B = decl_buffer({n, m}, DataType::float32(), "B");
    int factor = pick(1, 9);
    Var i("i"), jo("jo"), ji("ji");
    PrimExpr j = jo * factor + ji;
    PrimExpr value = pick(0, 1) ? buffer_load(A, {i, j}) * 2.0 + buffer_load(B, {i, j})
                                : ir::max(buffer_load(A, {i, j}), ir::cast(DataType::float32(), j - i));
    ForKind inner = pick(0, 3) ? ForKind::kVectorized : ForKind::kUnrolled;
    Stmt body = make_for(i, 0, n,
                         make_for(jo, 0, floordiv(m + (factor - 1), factor),
                                  make_for(ji, 0, factor, if_then_else(j < m, buffer_store(B, value, {i, j})), inner)));
    PrimFunc f = make_prim_func("kernel", {A, B}, body);
    PrimFunc g = verified(simplify(verified(f)));
    g = verified(simplify(verified(loop_partition(g))));
    g = verified(vectorize(g));
    g = verified(unroll(g, UnrollOptions{8}));
    g = verified(remove_no_op(verified(simplify(g))));
    vectorized += to_string(g).find("ramp") != std::string::npos;
    if (std::getenv("ANVIL_PRINT_PIPELINE")) std::printf("%s", to_string(g).c_str());
    for (int k = 0; k < 3; ++k) {
      int64_t nn = pick(0, 4), mm = pick(0, 30);
      testing::expect_same_results(f, g, {{nn, mm}, {nn, mm}}, seed + static_cast<uint32_t>(test * 3 + k));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  std::printf("PassPipeline: 40 kernels x 3 sizes, %d vectorized\n", vectorized);
  EXPECT_GT(vectorized, 10);
}

}  // namespace
}  // namespace anvil::tir::passes
