// register_runtime_functions(): puts the runtime's global functions, device APIs and module
// loaders into the registry. Called once by every entry point (CLI, Python, tests); idempotent.
#pragma once

namespace anvil {

void register_runtime_functions();

}  // namespace anvil
