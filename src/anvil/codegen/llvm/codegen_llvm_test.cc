// build_llvm details that the shared conformance suite does not see: the integer flags of the
// emitted IR (index arithmetic carries nsw, value arithmetic keeps wrapping semantics).
#include "anvil/codegen/llvm/codegen_llvm.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {
namespace {

using ir::buffer_load;
using ir::decl_buffer;
using ir::Var;

// B[i] = A[i * 2 + 1] * 7 + 5 over int32: the index arithmetic may assume no signed overflow
// (an overflowing index is out of bounds), the stored value must wrap like the evaluator's.
tir::PrimFunc strided_affine() {
  Var n = ir::size_var("n"), i("i");
  ir::Buffer A = decl_buffer({n * 2 + 1}, DataType::int32(), "A"), B = decl_buffer({n}, DataType::int32(), "B");
  return tir::make_prim_func(
      "strided_affine", {A, B},
      tir::make_for(i, 0, n, tir::buffer_store(B, buffer_load(A, {i * 2 + 1}) * 7 + 5, {i})));
}

TEST(CodeGenLLVM, IndexArithmeticIsNswAndValueArithmeticWraps) {
  register_runtime_functions();
  // Unoptimised IR shows the flags as emitted.
  std::string ll = llvm_module_source(build_llvm({strided_affine()}, Target::parse("llvm -opt-level=0")), "ll");
  EXPECT_NE(ll.find("mul nsw i32"), std::string::npos) << ll;  // i * 2 in the index
  EXPECT_NE(ll.find("add nsw i32"), std::string::npos) << ll;  // + 1 in the index, loop increment
  EXPECT_NE(ll.find("mul i32"), std::string::npos) << ll;      // value * 7: no nsw
  // Optimised code still wraps the values: INT32_MAX * 7 + 5 == 2147483646 (mod 2^32).
  Module m = build_llvm({strided_affine()}, Target::parse("llvm"));
  const int64_t n = 37;
  Tensor a = Tensor::empty({2 * n + 1}, DataType::int32()), b = Tensor::empty({n}, DataType::int32());
  auto* ap = static_cast<int32_t*>(a.data());
  for (int64_t x = 0; x < 2 * n + 1; ++x) ap[x] = x % 3 == 0 ? INT32_MAX : static_cast<int32_t>(x * 1000 - 20000);
  m["strided_affine"](a, b);
  for (int64_t x = 0; x < n; ++x) {
    uint32_t want = static_cast<uint32_t>(ap[2 * x + 1]) * 7u + 5u;
    ASSERT_EQ(static_cast<int32_t*>(b.data())[x], static_cast<int32_t>(want)) << "at " << x;
  }
}

}  // namespace
}  // namespace anvil::codegen
