// Test support for the SPIR-V code generator: targets with and without capabilities, compiling a
// PrimFunc through the TIR pipeline into a validated kernel, and small PrimFunc builders.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/codegen/spirv/codegen_spirv.h"
#include "anvil/codegen/spirv/vulkan_target.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen::spirv::testing {

// Every supports_* flag set (no device query), 256 threads, 128 bytes of push constants.
VulkanTarget full_target();
// Nothing but 32-bit types (the conservative defaults).
VulkanTarget plain_target();
// The target text of full_target() ("vulkan -supports_float16=1 ...").
std::string full_target_text();

// run_tir_pipeline, codegen_spirv, and the validator: a failing validation is a test failure
// that prints the message and the disassembly.
vulkan::KernelInfo compile(const tir::PrimFunc& f, const VulkanTarget& target = full_target());
// The kernel's disassembly.
std::string disassembly(const vulkan::KernelInfo& k);

// B[i] = A[i] op ... over n elements (n symbolic when n < 0), blockIdx.x * 64 + threadIdx.x
// with a bounds guard: body(i, A[i]) gives the value stored to B[i].
tir::PrimFunc elementwise(const std::string& name, ir::DataType in, ir::DataType out, int n,
                          const std::function<ir::PrimExpr(ir::PrimExpr)>& body);

}  // namespace anvil::codegen::spirv::testing
