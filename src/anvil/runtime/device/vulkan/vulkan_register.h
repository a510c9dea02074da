// register_vulkan(): what the runtime's start-up (register.cc) calls for Vulkan — the "vulkan"
// module loader, the DeviceAPI (when a Vulkan loader is present) and the global functions
// "vulkan.num_devices", "vulkan.validation_error_count", "vulkan.device_limits".
#pragma once

namespace anvil::vulkan {

// Idempotent; creates no Vulkan instance (that happens on first use of a device).
void register_vulkan();

}  // namespace anvil::vulkan
