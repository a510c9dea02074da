// Test support for the SPIR-V code generator (spirv_test_util.h).
#include "anvil/codegen/spirv/spirv_test_util.h"

#include <gtest/gtest.h>

#include "anvil/codegen/spirv/spirv_tools.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/pipeline/build.h"

namespace anvil::codegen::spirv::testing {

VulkanTarget full_target() {
  VulkanTarget t;
  t.supports_float16 = t.supports_float64 = t.supports_int8 = t.supports_int16 = t.supports_int64 = true;
  t.supports_8bit_buffer = t.supports_16bit_buffer = true;
  return t;
}

VulkanTarget plain_target() { return VulkanTarget{}; }

std::string full_target_text() {
  return "vulkan -max_num_threads=256 -supports_float16=1 -supports_float64=1 -supports_int8=1 -supports_int16=1 "
         "-supports_int64=1 -supports_8bit_buffer=1 -supports_16bit_buffer=1";
}

std::string disassembly(const vulkan::KernelInfo& k) {
  try {
    return disassemble_spirv(k.spirv);
  } catch (const std::exception& e) {
    return std::string("(no disassembly: ") + e.what() + ")";
  }
}

vulkan::KernelInfo compile(const tir::PrimFunc& f, const VulkanTarget& target) {
  vulkan::KernelInfo k = codegen_spirv(pipeline::run_tir_pipeline(f), target);
  auto err = spirv_validation_error(k.spirv);
  EXPECT_FALSE(err.has_value()) << "kernel " << k.name << ": " << err.value_or("") << "\n" << disassembly(k);
  return k;
}

tir::PrimFunc elementwise(const std::string& name, ir::DataType in, ir::DataType out, int n,
                          const std::function<ir::PrimExpr(ir::PrimExpr)>& body) {
  ir::PrimExpr len = n < 0 ? ir::PrimExpr(ir::size_var("n")) : ir::PrimExpr(n);
  ir::Buffer A = ir::decl_buffer({len}, in, "A");
  ir::Buffer B = ir::decl_buffer({len}, out, "B");
  ir::Var bx("bx"), tx("tx");
  ir::PrimExpr i = bx * 64 + tx;
  tir::Stmt store = tir::buffer_store(B, body(ir::buffer_load(A, {i})), {i});
  tir::Stmt guarded = tir::if_then_else(i < len, store);
  tir::Stmt s = tir::make_thread_for(bx, 0, ir::floordiv(len + 63, 64), "blockIdx.x",
                                     tir::make_thread_for(tx, 0, 64, "threadIdx.x", guarded));
  return tir::make_prim_func(name, {A, B}, s);
}

}  // namespace anvil::codegen::spirv::testing
