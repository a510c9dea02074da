// The host CPU's DeviceAPI (aligned_alloc + memmove); registered by register_device_apis().
#pragma once

#include "anvil/runtime/device_api.h"

namespace anvil {

DeviceAPI* cpu_device_api();

}  // namespace anvil
