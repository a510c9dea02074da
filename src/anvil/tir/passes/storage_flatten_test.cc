// storage_flatten: golden text for n-d loads/stores/allocations, vector accesses, strides and
// offsets; the flattened function computes the same as the original in the interpreter.
#include "anvil/tir/passes/storage_flatten.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "anvil/ir/expr_ops.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/passes/pass_testing.h"
#include "anvil/tir/printer.h"

namespace anvil::tir {
namespace {

using ir::buffer_load;
using passes::storage_flatten;
using ir::decl_buffer;
using passes::testing::verified;

TEST(StorageFlatten, CompactTwoDimensionalAccessesBecomeRowMajorIndices) {
  Var n = ir::size_var("n"), m = ir::size_var("m"), i("i"), j("j");
  Buffer A = decl_buffer({n, m}, DataType::float32(), "A"), B = decl_buffer({n, m}, DataType::float32(), "B");
  PrimFunc f = make_prim_func("f", {A, B}, make_for(i, 0, n, make_for(j, 0, m, buffer_store(B, buffer_load(A, {i, j}) + 1.0, {i, j}))));
  EXPECT_EQ(to_string(verified(storage_flatten(verified(f)))->body()),
            "for i in range(0, n):\n"
            "  for j in range(0, m):\n"
            "    B[i * m + j] = A[i * m + j] + 1.0f\n");
}

TEST(StorageFlatten, VectorInnerAccessIsOneRampAndAllocationIsFlat) {
  Var i("i");
  Buffer T = decl_buffer({4, 8}, DataType::float32(), "T", "local");
  Buffer O = decl_buffer({4, 8}, DataType::float32(), "O");
  Stmt body = allocate(T->data(), DataType::float32(), {4, 8}, "local",
                       make_for(i, 0, 4, buffer_store(O, buffer_load(T, {i, ir::ramp(0, 1, 8)}), {i, ir::ramp(0, 1, 8)})));
  EXPECT_EQ(to_string(verified(storage_flatten(verified(body, {O})), {O})),
            "T_data = allocate(float32, [4 * 8], \"local\")\n"
            "for i in range(0, 4):\n"
            "  O[ramp(i * 8, 1, 8)] = T[ramp(i * 8, 1, 8)]\n");
}

TEST(StorageFlatten, StridesAndOffsetAreUsed) {
  Var s = ir::size_var("s"), off = ir::size_var("off"), i("i");
  Buffer A = Buffer::make(Var("A_data", ir::handle_type()), DataType::float32(), {3, 2}, {s, 1}, off, "A", 64, "global");
  Buffer B = decl_buffer({3}, DataType::float32(), "B");
  PrimFunc f = make_prim_func("f", {A, B}, make_for(i, 0, 3, buffer_store(B, buffer_load(A, {i, 1}), {i})));
  EXPECT_EQ(to_string(verified(storage_flatten(verified(f)))->body()), "for i in range(0, 3):\n  B[i] = A[off + i * s + 1]\n");
}

TEST(StorageFlatten, IsIdempotentAndKeepsFlatAccesses) {
  Var n = ir::size_var("n"), i("i");
  Buffer A = decl_buffer({n}, DataType::float32(), "A");
  Stmt s = make_for(i, 0, n, buffer_store(A, buffer_load(A, {i}) * 2.0, {i}));
  EXPECT_TRUE(verified(storage_flatten(verified(s, {A})), {A}).same_as(s));
}

TEST(StorageFlatten, FlattenedFunctionComputesTheSameInTheInterpreter) {
  Var n = ir::size_var("n"), m = ir::size_var("m"), i("i"), j("j");
  Buffer A = decl_buffer({n, m}, DataType::float32(), "A"), B = decl_buffer({m, n}, DataType::float32(), "B");
  PrimFunc f = make_prim_func("transpose", {A, B},
                              make_for(i, 0, n, make_for(j, 0, m, buffer_store(B, buffer_load(A, {i, j}) * 3.0, {j, i}))));
  PrimFunc g = verified(storage_flatten(verified(f)));
  const uint32_t seed = 7;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  Tensor a = Tensor::empty({5, 3}, DataType::float32()), b1 = Tensor::empty({3, 5}, DataType::float32()),
         b2 = Tensor::empty({3, 5}, DataType::float32());
  for (int k = 0; k < 15; ++k) static_cast<float*>(a.data())[k] = std::uniform_real_distribution<float>(-1, 1)(rng);
  run_prim_func(f, {a.dl(), b1.dl()});
  run_prim_func(g, {a.dl(), b2.dl()});
  EXPECT_EQ(std::memcmp(b1.data(), b2.data(), 15 * sizeof(float)), 0);
}

}  // namespace
}  // namespace anvil::tir
