// The global function registry as seen from Python: look-up, registration (Python callables are
// wrapped as Functions), removal and listing. Friendlier signatures live in anvil/_registry.py.
#include "anvil/runtime/registry.h"

#include <vector>

#include "bindings.h"

namespace anvil::python {

void init_registry(nb::module_& m) {
  m.def(
      "get_global_func",
      [](const std::string& name, bool allow_missing) -> nb::object {
        if (allow_missing) {
          std::optional<Function> fn = Registry::find(name);
          return fn ? nb::cast(*fn) : nb::none();
        }
        return nb::cast(Registry::get(name));
      },
      nb::arg("name"), nb::arg("allow_missing") = false);
  m.def(
      "register_func",
      [](const std::string& name, nb::handle fn, bool override_existing) {
        Function f = nb::isinstance<Function>(fn) ? nb::cast<Function>(fn) : function_from_callable(fn, name);
        Registry::set(name, f, override_existing);
      },
      nb::arg("name"), nb::arg("f"), nb::arg("override") = false);
  m.def(
      "remove_global_func", [](const std::string& name) { return Registry::remove(name); }, nb::arg("name"));
  m.def(
      "list_global_func_names",
      [](const std::string& prefix) {
        nb::list out;
        for (const std::string& name : Registry::list(prefix)) out.append(nb::str(name.c_str(), name.size()));
        return out;
      },
      nb::arg("prefix") = "");
}

}  // namespace anvil::python
