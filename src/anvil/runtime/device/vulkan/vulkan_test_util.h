// Test helpers for the Vulkan runtime: SPIR-V assembled from text (SPIRV-Tools), the axpy
// kernel used across tests (c[i] = a[i] * s + b[i], n = a's dim 0, grid = ceildiv(n, 64)), and
// the skip when this machine has no Vulkan device.
#pragma once

#include <gtest/gtest.h>
#include <spirv-tools/libspirv.h>

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/device/vulkan/vulkan_device_limits.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"

// Skips without a Vulkan device, except in CI (CI=true), where scripts/setup.sh installs lavapipe:
// there a missing device is a failure, so the Vulkan tests cannot pass by not running.
#define ANVIL_SKIP_WITHOUT_VULKAN()                                                                  \
  do {                                                                                               \
    if (::anvil::vulkan::num_devices() == 0) {                                                       \
      const char* ci = std::getenv("CI");                                                            \
      if (ci != nullptr && std::string_view(ci) == "true")                                           \
        FAIL() << "no Vulkan device under CI=true (scripts/setup.sh installs mesa-vulkan-drivers)"; \
      GTEST_SKIP() << "no Vulkan device: nothing to run on";                                         \
    }                                                                                                \
  } while (0)

namespace anvil::vulkan::testing {

inline std::vector<uint32_t> assemble(const std::string& text) {
  spv_context ctx = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_binary binary = nullptr;
  spv_diagnostic diag = nullptr;
  spv_result_t r = spvTextToBinary(ctx, text.data(), text.size(), &binary, &diag);
  std::vector<uint32_t> words;
  if (r == SPV_SUCCESS) {
    words.assign(binary->code, binary->code + binary->wordCount);
  } else {
    ADD_FAILURE() << "SPIR-V assembly failed: " << (diag ? diag->error : "?") << " at line "
                  << (diag ? diag->position.line + 1 : 0);
  }
  spvBinaryDestroy(binary);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  return words;
}

// The axpy shader: three float storage buffers at bindings 0..2 of set 0 (StorageBuffer storage
// class, Block struct of one runtime array, ArrayStride 4), and the scalar block {float s at 0;
// int n at 4} as a push-constant Block or, with `uniform`, a Uniform Block at binding 3.
inline std::string axpy_spirv_text(bool uniform) {
  std::string block_class = uniform ? "Uniform" : "PushConstant";
  std::string extra = uniform ? "OpDecorate %params DescriptorSet 0\nOpDecorate %params Binding 3\n" : "";
  return R"(
OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "axpy_main" %gid
OpExecutionMode %main LocalSize 64 1 1
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %rta ArrayStride 4
OpMemberDecorate %buf 0 Offset 0
OpDecorate %buf Block
OpDecorate %A DescriptorSet 0
OpDecorate %A Binding 0
OpDecorate %B DescriptorSet 0
OpDecorate %B Binding 1
OpDecorate %C DescriptorSet 0
OpDecorate %C Binding 2
OpMemberDecorate %pc 0 Offset 0
OpMemberDecorate %pc 1 Offset 4
OpDecorate %pc Block
)" + extra +
         R"(
%void = OpTypeVoid
%fn = OpTypeFunction %void
%float = OpTypeFloat 32
%int = OpTypeInt 32 1
%uint = OpTypeInt 32 0
%bool = OpTypeBool
%v3uint = OpTypeVector %uint 3
%ptr_in = OpTypePointer Input %v3uint
%gid = OpVariable %ptr_in Input
%rta = OpTypeRuntimeArray %float
%buf = OpTypeStruct %rta
%ptr_buf = OpTypePointer StorageBuffer %buf
%A = OpVariable %ptr_buf StorageBuffer
%B = OpVariable %ptr_buf StorageBuffer
%C = OpVariable %ptr_buf StorageBuffer
%pc = OpTypeStruct %float %int
%ptr_pc = OpTypePointer )" +
         block_class + R"( %pc
%params = OpVariable %ptr_pc )" +
         block_class + R"(
%ptr_pc_f = OpTypePointer )" +
         block_class + R"( %float
%ptr_pc_i = OpTypePointer )" +
         block_class + R"( %int
%ptr_sb_f = OpTypePointer StorageBuffer %float
%int_0 = OpConstant %int 0
%int_1 = OpConstant %int 1
%main = OpFunction %void None %fn
%entry = OpLabel
%g3 = OpLoad %v3uint %gid
%gx = OpCompositeExtract %uint %g3 0
%i = OpBitcast %int %gx
%np = OpAccessChain %ptr_pc_i %params %int_1
%n = OpLoad %int %np
%inb = OpSLessThan %bool %i %n
OpSelectionMerge %end None
OpBranchConditional %inb %body %end
%body = OpLabel
%sp = OpAccessChain %ptr_pc_f %params %int_0
%s = OpLoad %float %sp
%ap = OpAccessChain %ptr_sb_f %A %int_0 %i
%a = OpLoad %float %ap
%bp = OpAccessChain %ptr_sb_f %B %int_0 %i
%b = OpLoad %float %bp
%as = OpFMul %float %a %s
%r = OpFAdd %float %as %b
%cp = OpAccessChain %ptr_sb_f %C %int_0 %i
OpStore %cp %r
OpBranch %end
%end = OpLabel
OpReturn
OpFunctionEnd
)";
}

// Launch metadata of the axpy kernel: arguments (a, b, c: float32[n]; s: float32).
inline KernelInfo axpy_kernel(bool uniform, const std::string& name = "axpy") {
  KernelInfo k;
  k.name = name;
  k.entry_point = "axpy_main";
  k.spirv = assemble(axpy_spirv_text(uniform));
  DLDataType f32{kDLFloat, 32, 1}, i32{kDLInt, 32, 1};
  for (int t = 0; t < 3; ++t) {
    KernelArg a;
    a.kind = KernelArg::kTensor;
    a.name = std::string(1, static_cast<char>('a' + t));
    a.dtype = f32;
    a.binding = t;
    a.shape = {-1};
    a.shape_slot = {1};
    k.args.push_back(a);
  }
  KernelArg s;
  s.kind = KernelArg::kScalar;
  s.name = "s";
  s.dtype = f32;
  s.slot = 0;
  k.args.push_back(s);
  k.slots.push_back(ScalarSlot{ScalarSlot::kScalarArg, 3, 0, f32, 0});
  k.slots.push_back(ScalarSlot{ScalarSlot::kTensorDim, 0, 0, i32, 4});
  k.block_bytes = 8;
  k.block_in_uniform = uniform;
  auto op = [](LaunchOp o) { return static_cast<int64_t>(o); };
  k.grid[0].code = {op(LaunchOp::kSlot),  1,  op(LaunchOp::kConst),   63, op(LaunchOp::kAdd),
                    op(LaunchOp::kConst), 64, op(LaunchOp::kFloorDiv)};
  k.grid[1] = LaunchExpr::constant(1);
  k.grid[2] = LaunchExpr::constant(1);
  k.workgroup_size = {64, 1, 1};
  return k;
}

}  // namespace anvil::vulkan::testing
