// A library for --load-library tests: its init entry point registers a global function, as a
// user's extension library would.
#include "anvil/runtime/registry.h"

extern "C" void anvil_rpc_library_init() {
  anvil::register_function("rpc.test.from_library", [](int64_t x) { return x * 7; }, /*override_existing=*/true);
}
