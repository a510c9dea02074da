// The SPIR-V code generator: tir::PrimFuncs (after pipeline::run_tir_pipeline) -> Vulkan compute
// shaders, one module with one entry point ("main") per kernel, plus the launch metadata of
// vulkan_kernel_info.h. build_vulkan is the "vulkan" row of the code generator table.
//
// What a kernel may contain:
//  - parameters: tensors (storage buffers at set 0, binding = order among the tensors; compact,
//    offset 0, constant or symbolic-Var dimensions) and scalars (int/uint/float/bool). Scalars
//    and symbolic dimensions become the scalar slots: one Block, push constants while it fits
//    max_push_constants_size, otherwise a uniform buffer at binding = number of tensors.
//    Slots are 32-bit (int8/int16/bool -> int32, uint8/uint16 -> uint32, float16 -> float32)
//    or 64-bit (int64 and uint64 -> int64, float64), at offsets aligned to their size.
//  - ThreadBinding loops: threadIdx.{x,y,z} with constant extents (the LocalSize; their product
//    at most max_num_threads, each at most the device's per-axis limit), blockIdx.{x,y,z} with
//    extents over integer slots (the grid: + - * floordiv floormod min max, integer casts). All
//    blockIdx loops of one tag must have the same extent; vthread is not supported. A threadIdx
//    loop shorter than the axis's workgroup size (the largest loop of that tag) is guarded.
//  - serial, unrolled, parallel and vectorized loops (all emitted as structured serial loops),
//    if/else, let, sequences, evaluations, asserts (dropped: a shader cannot report them; the
//    runtime checks arguments before dispatch), Allocate "local" (Function arrays) and "shared"
//    (Workgroup arrays, counted in shared_memory_bytes, at most max_shared_memory_per_block),
//    constant extents only; the workgroup barrier of workgroup_barrier.h.
//  - scalar expressions of the types the target supports; vector (multi-lane) expressions are
//    rejected with NotImplementedError naming the kernel.
// Capabilities the code needs but the target lacks (vulkan_target.h) are a ValueError naming the
// attribute and the kernel. Every other unsupported construct is a NotImplementedError naming
// the kernel and the construct.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/codegen/spirv/vulkan_target.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/runtime/module/module.h"
#include "anvil/target/target.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen::spirv {

// One kernel: the module's words and its launch metadata (not validated here).
vulkan::KernelInfo codegen_spirv(const tir::PrimFunc& f, const VulkanTarget& target);

}  // namespace anvil::codegen::spirv

namespace anvil::codegen {

// The "vulkan" module of the kernels (validated when spirv_validation_enabled()).
Module build_vulkan(const std::vector<tir::PrimFunc>& funcs, const Target& target);
// get_source of a "vulkan" module: the disassembly of every kernel for format "spirv" (or "");
// ValueError for another format.
std::string vulkan_source(const Module& module, std::string_view format);

}  // namespace anvil::codegen
