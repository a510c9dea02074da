// anvil.runtime.Module (TVM's runtime.Module) and the module factories: params modules, C source
// modules, saving/loading params and export_library.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <optional>
#include <vector>

#include "anvil/codegen/c/c_source_module.h"
#include "anvil/pipeline/export_library.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/tensor_io.h"
#include "bindings.h"

namespace anvil::python {
namespace {

std::map<std::string, Tensor> params_from_dict(nb::handle params) {
  if (!PyDict_Check(params.ptr()))
    type_error("expected a dict of name -> tensor, got '", Py_TYPE(params.ptr())->tp_name, "'");
  std::map<std::string, Tensor> out;
  for (auto [key, value] : nb::borrow<nb::dict>(params)) {
    if (!PyUnicode_Check(key.ptr())) type_error("parameter names must be str, got '", Py_TYPE(key.ptr())->tp_name, "'");
    Value v = to_value(value);
    if (v.kind() != ValueKind::kTensor)
      type_error("parameter '", nb::cast<std::string>(key), "' must be a Tensor or numpy array, got '",
                 Py_TYPE(value.ptr())->tp_name, "'");
    out.emplace(nb::cast<std::string>(key), v.as_tensor());
  }
  return out;
}

nb::list module_list(const std::vector<Module>& modules) {
  nb::list out;
  for (const Module& mod : modules) out.append(nb::cast(mod));
  return out;
}

std::vector<std::string> function_names(const Module& mod) {
  nb::gil_scoped_release release;
  return mod.node()->list_functions();
}

nb::list str_list(const std::vector<std::string>& names) {
  nb::list out;
  for (const auto& n : names) out.append(nb::str(n.c_str(), n.size()));
  return out;
}

void export_library(const Module& mod, const std::string& path, std::optional<std::string> compiler,
                    std::vector<std::string> options, bool keep_temp_dir) {
  pipeline::ExportOptions opts;
  if (compiler) opts.compiler = *compiler;
  opts.extra_flags = std::move(options);
  opts.keep_temp_dir = keep_temp_dir;
  nb::gil_scoped_release release;
  pipeline::export_library(mod, path, opts);
}

}  // namespace

void init_runtime_module(nb::module_& m) {
  nb::class_<Module>(m, "Module",
                     "A runtime module: a named collection of functions plus imported modules (a loaded\n"
                     "kernel library, a params module, C source, ...). mod['name'] returns a Function.")
      .def_prop_ro(
          "kind", [](const Module& mod) { return mod.kind(); }, "The module kind: 'library', 'params', 'c', ...")
      .def_prop_ro(
          "type_key", [](const Module& mod) { return mod.kind(); }, "TVM's name for `kind`.")
      .def_prop_ro(
          "imports", [](const Module& mod) { return module_list(mod.imports()); }, "The imported modules, a list.")
      .def_prop_ro(
          "imported_modules", [](const Module& mod) { return module_list(mod.imports()); },
          "TVM's name for `imports`: a device build's kernels (kind 'vulkan', ...) are imports of its host module.")
      .def(
          "__getitem__", [](const Module& mod, const std::string& name) { return mod.get_function(name); },
          nb::arg("name"))
      .def("get_function", &Module::get_function, nb::arg("name"), nb::arg("query_imports") = false,
           "The function `name` of this module, else (when query_imports) of its imports, depth-first.\n"
           "Raises ValueError when no module defines it.")
      .def(
          "implements_function",
          [](const Module& mod, const std::string& name, bool query_imports) {
            return mod.find_function(name, query_imports).has_value();
          },
          nb::arg("name"), nb::arg("query_imports") = false, "True when the module defines `name`.")
      .def(
          "list_functions", [](const Module& mod) { return str_list(function_names(mod)); },
          "The names of the functions this module itself defines (not those of its imports).")
      .def("import_module", &Module::import_module, nb::arg("other"), "Adds `other` to this module's imports.")
      // Module.export_library (anvil/runtime/module.py) wraps this with path-like handling.
      .def("_export_library", &export_library, nb::arg("file_name"), nb::arg("compiler").none(), nb::arg("options"),
           nb::arg("keep_temp_dir"))
      .def(
          "same_as", [](const Module& a, const Module& b) { return a.same_as(b); },
          "True when both refer to the same module object.")
      .def("__repr__", [](const Module& mod) { return "<anvil.runtime.Module kind=" + mod.kind() + ">"; });

  m.def(
      "c_source_module",
      [](std::string source, std::vector<std::string> names) {
        return codegen::make_c_source_module(std::move(source), std::move(names));
      },
      nb::arg("source"), nb::arg("function_names"));
  m.def(
      "params_module", [](nb::handle params) { return make_params_module(params_from_dict(params)); },
      nb::arg("params"));
  m.def(
      "save_params",
      [](nb::handle params) {
        std::map<std::string, Tensor> map = params_from_dict(params);
        std::string bytes;
        {
          nb::gil_scoped_release release;
          bytes = save_params(map);
        }
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("params"));
  m.def(
      "load_params",
      [](nb::bytes data) {
        std::map<std::string, Tensor> map;
        {
          std::string_view view(static_cast<const char*>(data.data()), data.size());
          nb::gil_scoped_release release;
          map = load_params(view);
        }
        nb::dict out;
        for (auto& [name, tensor] : map) out[nb::str(name.c_str(), name.size())] = nb::cast(tensor);
        return out;
      },
      nb::arg("data"));
}

}  // namespace anvil::python
