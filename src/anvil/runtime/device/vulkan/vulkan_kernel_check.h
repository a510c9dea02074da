// The consistency check of one kernel's launch metadata (vulkan_kernel_info.h): bindings follow
// tensor order, slots and their sources agree, offsets lie within the block, the SPIR-V has a
// header, grid programs are well formed. parse_kernels, serialize_kernels and make_vulkan_module
// run it.
#pragma once

#include <string>

#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"

namespace anvil::vulkan {

// Throws ValueError "<where>: <what is wrong>".
void check_kernel_info(const KernelInfo& kernel, const std::string& where);

}  // namespace anvil::vulkan
