// The extension module anvil._ffi: registers the runtime's and the compiler's global functions,
// then each area's bindings. Users import `anvil`, never `anvil._ffi` directly.
#include <cstdlib>

#include "anvil/codegen/module_source.h"
#include "anvil/rpc/cli.h"
#include "anvil/runtime/register.h"
#include "bindings.h"
#include "te_bindings.h"

namespace nb = nanobind;
using namespace anvil::python;

NB_MODULE(_ffi, m) {
  m.doc() = "Anvil's C++ runtime and compiler, bound with nanobind (use the `anvil` package instead).";
  // CMake's project(VERSION), the one place the version is written (anvil-rpc --version too).
  std::string_view version = anvil::rpc::cli::version();
  m.attr("__version__") = nb::str(version.data(), version.size());
  anvil::register_runtime_functions();
  anvil::codegen::register_codegen_functions();
  // A Python callable held by C++ that refers back to its holder (a Function kept in a global it
  // closes over) is a cycle Python's GC cannot see; nanobind would report it at exit. Its leak
  // report is a debugging aid, so it is opt-in: ANVIL_PY_LEAK_WARNINGS=1.
  nb::set_leak_warnings(std::getenv("ANVIL_PY_LEAK_WARNINGS") != nullptr);
  init_errors(m);
  init_value_convert(m);
  init_device(m);
  init_tensor(m);
  init_dlpack(m);
  init_function(m);
  init_registry(m);
  init_runtime_module(m);
  init_vm(m);
  init_rpc(m);
  init_te_bindings(m);
  init_frontend(m);
}
