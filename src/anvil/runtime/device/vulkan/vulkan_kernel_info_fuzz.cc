// libFuzzer target: arbitrary bytes into parse_kernels (the "vulkan" module loader). Every input
// must parse or throw anvil::Error; what parses must serialize back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    std::vector<anvil::vulkan::KernelInfo> kernels = anvil::vulkan::parse_kernels(bytes);
    if (anvil::vulkan::serialize_kernels(kernels) != bytes) std::abort();
    for (const auto& k : kernels) {
      std::vector<int64_t> slots(k.slots.size(), 3);
      for (const auto& g : k.grid) {
        try {
          g.eval(slots);
        } catch (const anvil::Error&) {
        }
      }
    }
  } catch (const anvil::Error&) {
  }
  return 0;
}
