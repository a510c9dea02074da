// The host side of one kernel call, before anything touches Vulkan: the arguments checked
// against the kernel's metadata (count, Vulkan device, dtype, rank, constant dims, symbolic dims
// agreeing, compact strides, byte_offset alignment), the scalar block filled (scalars as their
// slot type, tensor dims) and the grid evaluated. Every mistake is a ValueError naming the
// kernel and the argument.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/runtime/function.h"

namespace anvil::vulkan {

struct LaunchArgs {
  int device_id = 0;                      // the device of the tensors (0 without tensors)
  std::vector<const DLTensor*> tensors;   // in binding order
  std::string block;                      // block_bytes bytes, the scalar block
  std::array<uint32_t, 3> grid{1, 1, 1};  // workgroup counts (0: nothing to run)
};

// `storage_alignment`: the device's minStorageBufferOffsetAlignment, looked up for the device
// the tensors are on (called with that id).
LaunchArgs prepare_launch(const KernelInfo& kernel, Args args,
                          const std::function<uint64_t(int device_id)>& storage_alignment,
                          const std::function<std::array<uint32_t, 3>(int device_id)>& max_groups);

// IEEE binary16 bits of `v`, rounded to nearest even.
uint16_t float_to_half(float v);

}  // namespace anvil::vulkan
