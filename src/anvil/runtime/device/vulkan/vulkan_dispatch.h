// Runs one call of a kernel: checks and packs the arguments (vulkan_launch_args.h), gets the
// pipeline of the device (made once, cached), binds the buffers (push descriptors, or a
// descriptor set from the stream's pools), passes the scalar block (push constants, or a
// uniform slice written for this dispatch), and records the dispatch plus a barrier on the
// device's default stream. Asynchronous: copies back to the host synchronise.
#pragma once

#include <cstddef>
#include <cstdint>

#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/runtime/function.h"

namespace anvil::vulkan {

void dispatch_kernel(uint64_t module_id, size_t index, const KernelInfo& kernel, Args args);

}  // namespace anvil::vulkan
