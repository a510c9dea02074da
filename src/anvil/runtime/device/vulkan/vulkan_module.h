// The "vulkan" module kind: SPIR-V kernels with their launch metadata (vulkan_kernel_info.h).
// Each kernel is a Function taking the PrimFunc's arguments (Vulkan tensors and scalars); a call
// checks them against the metadata (count, device, dtype, rank, constant and shared dimensions,
// compact strides) with a ValueError naming the argument, fills the scalar block, and records
// the dispatch on the device's stream (pipelines are created once per device and kernel).
// Serialisable: it travels in an exported library's blob and comes back through its loader,
// registered by register_vulkan() (also where the Vulkan DeviceAPI is registered when a Vulkan
// loader is present on the machine).
#pragma once

#include <vector>

#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/runtime/module/module.h"

namespace anvil::vulkan {

Module make_vulkan_module(std::vector<KernelInfo> kernels);
// The kernels of a module of kind "vulkan"; ValueError for another kind.
const std::vector<KernelInfo>& vulkan_module_kernels(const Module& module);

}  // namespace anvil::vulkan
