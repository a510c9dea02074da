// The model compiler for Python: graph::IRModule as an opaque, printable object (anvil.IRModule),
// the ONNX importer (frontend/onnx/importer.h) and the whole-model compile
// (pipeline/compile.h). python/anvil/frontend/__init__.py and anvil.compile wrap these.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/graph/printer.h"
#include "anvil/pipeline/compile.h"
#include "bindings.h"

namespace anvil::python {
namespace {

using graph::IRModule;

// A module attribute that is a list of strings ("input_names", "output_names"); empty when absent.
std::vector<std::string> string_list_attr(const IRModule& mod, const char* name) {
  if (!graph::has_attr(mod.attrs, name)) return {};
  return graph::get_strings(mod.attrs, name);
}

std::vector<std::string> function_names(const IRModule& mod) {
  std::vector<std::string> out;
  for (const auto& [name, f] : mod.functions) out.push_back(name);
  return out;
}

std::vector<std::string> prim_func_names(const IRModule& mod) {
  std::vector<std::string> out;
  for (const auto& [name, f] : mod.prim_funcs) out.push_back(name);
  return out;
}

// {"x": "Tensor[(n, 4), float32]", ...}: the parameters of "main" by name, as the printer writes
// their types (symbolic dims by name).
nb::dict param_types(const IRModule& mod) {
  nb::dict out;
  for (const graph::Var& p : mod.main().params()) out[nb::cast(p.name())] = graph::to_string(p.type());
  return out;
}

std::string text(const IRModule& mod, int64_t max_constant_values) {
  graph::PrintOptions options;
  options.max_constant_values = max_constant_values;
  nb::gil_scoped_release release;
  return graph::to_string(mod, options);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out;
}

std::string repr(const IRModule& mod) {
  std::string out = "<anvil.IRModule functions=[" + join(function_names(mod)) + "]";
  if (!mod.prim_funcs.empty()) out += " prim_funcs=" + std::to_string(mod.prim_funcs.size());
  std::vector<std::string> inputs = string_list_attr(mod, "input_names");
  if (!inputs.empty()) out += " inputs=[" + join(inputs) + "]";
  std::vector<std::string> outputs = string_list_attr(mod, "output_names");
  if (!outputs.empty()) out += " outputs=[" + join(outputs) + "]";
  return out + ">";
}

// values: None or {name: numpy array}; each is copied, so the module owns its constants and
// later writes to the array do not reach it.
void bind_input_values(nb::handle values, frontend::onnx::ImportOptions& options) {
  if (values.is_none()) return;
  if (!PyDict_Check(values.ptr()))
    type_error("from_onnx: input_values must be a dict of input name -> numpy array, got '",
               Py_TYPE(values.ptr())->tp_name, "'");
  for (auto [key, value] : nb::borrow<nb::dict>(values)) {
    if (!PyUnicode_Check(key.ptr()))
      type_error("from_onnx: input_values keys must be input names (str), got '", Py_TYPE(key.ptr())->tp_name, "'");
    std::string name = nb::cast<std::string>(key);
    if (!is_numpy_array(value))
      type_error("from_onnx: input_values['", name, "'] must be a numpy array, got '", Py_TYPE(value.ptr())->tp_name,
                 "'");
    Tensor view = tensor_from_numpy(value);
    Tensor copy = Tensor::empty(view.shape(), view.dtype(), Device::cpu());
    copy.copy_from(view);
    options.input_values[name] = std::move(copy);
  }
}

// shape: None or {name: sequence of ints (-1 keeps the model's dimension)}.
frontend::onnx::ImportOptions import_options(nb::handle shape, const std::string& base_dir, nb::handle values) {
  frontend::onnx::ImportOptions options;
  options.base_dir = base_dir;
  bind_input_values(values, options);
  if (shape.is_none()) return options;
  if (!PyDict_Check(shape.ptr()))
    type_error("from_onnx: shape must be a dict of input name -> tuple of ints, got '", Py_TYPE(shape.ptr())->tp_name,
               "'");
  for (auto [key, value] : nb::borrow<nb::dict>(shape)) {
    if (!PyUnicode_Check(key.ptr()))
      type_error("from_onnx: shape keys must be input names (str), got '", Py_TYPE(key.ptr())->tp_name, "'");
    std::string name = nb::cast<std::string>(key);
    if (PyUnicode_Check(value.ptr()) || !PySequence_Check(value.ptr()))
      type_error("from_onnx: the shape of input '", name, "' must be a tuple of ints, got '",
                 Py_TYPE(value.ptr())->tp_name, "'");
    std::vector<int64_t> dims;
    for (nb::handle d : nb::borrow<nb::sequence>(value))
      dims.push_back(to_int64(d, ("from_onnx: a dimension of input '" + name + "'").c_str()));
    options.input_shapes[name] = std::move(dims);
  }
  return options;
}

}  // namespace

void init_frontend(nb::module_& m) {
  nb::class_<IRModule>(m, "IRModule",
                       "A model in the graph IR: graph functions (\"main\" is the entry), kernels (PrimFuncs)\n"
                       "and constants. str() prints it; anvil.compile builds it.")
      .def("astext", &text, nb::arg("max_constant_values") = 16,
           "The text form; constants with more elements than max_constant_values are elided (-1: all).")
      .def("script", &text, nb::arg("max_constant_values") = 16, "TVM's name for astext.")
      .def("__str__", [](const IRModule& mod) { return text(mod, 16); })
      .def("__repr__", &repr)
      .def_prop_ro("functions", &function_names, "The names of the graph functions.")
      .def_prop_ro("prim_funcs", &prim_func_names, "The names of the kernels (after lowering).")
      .def_prop_ro(
          "input_names", [](const IRModule& mod) { return string_list_attr(mod, "input_names"); },
          "The model's input names, in order (ONNX names).")
      .def_prop_ro(
          "output_names", [](const IRModule& mod) { return string_list_attr(mod, "output_names"); },
          "The model's output names, in order.")
      .def_prop_ro("param_types", &param_types,
                   "{name: type text} of main's parameters, e.g. 'Tensor[(n, 4), float32]'.");

  m.def(
      "_from_onnx_file",
      [](const std::string& path, nb::handle shape, const std::string& base_dir, nb::handle values) {
        frontend::onnx::ImportOptions options = import_options(shape, base_dir, values);
        nb::gil_scoped_release release;
        return frontend::onnx::from_onnx_file(path, options);
      },
      nb::arg("path"), nb::arg("shape").none(), nb::arg("base_dir"), nb::arg("input_values").none() = nb::none());
  m.def(
      "_from_onnx_bytes",
      [](nb::bytes data, nb::handle shape, const std::string& base_dir, nb::handle values) {
        frontend::onnx::ImportOptions options = import_options(shape, base_dir, values);
        std::string_view bytes(data.c_str(), data.size());
        nb::gil_scoped_release release;  // `data` stays alive: the caller holds it
        return frontend::onnx::from_onnx_bytes(bytes, options);
      },
      nb::arg("data"), nb::arg("shape").none(), nb::arg("base_dir"), nb::arg("input_values").none() = nb::none());
  m.def(
      "_compile",
      [](const IRModule& mod, const std::string& target, int opt_level, const std::string& dump_ir_dir,
         bool progress) {
        Target t = Target::parse(target);
        pipeline::CompileOptions options;
        options.opt_level = opt_level;
        options.dump_ir_dir = dump_ir_dir;
        // Printed from C++ (the GIL is released): stderr, as `anvil compile` does.
        if (progress)
          options.progress = [](const std::string& stage, int done, int total, double seconds) {
            std::fprintf(stderr, "anvil.compile: %s %d/%d (%.3f s)\n", stage.c_str(), done, total, seconds);
          };
        nb::gil_scoped_release release;
        return pipeline::compile_to_module(mod, t, options);
      },
      nb::arg("mod"), nb::arg("target"), nb::arg("opt_level"), nb::arg("dump_ir_dir"), nb::arg("progress"),
      "The executable module of the compiled model; its import is the kernel module.");
}

}  // namespace anvil::python
