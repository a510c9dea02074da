// anvil.Function (a packed function called with positional arguments) and the wrapping of Python
// callables as Functions. A call from Python releases the GIL while C++ runs; a Python callable
// called from C++ (on any thread) takes it back, and a Python exception it raises travels through
// C++ as PythonError, surfacing again in Python as the very same exception.
#include <memory>
#include <vector>

#include "errors.h"

namespace anvil::python {
namespace {

void release_object(PyObject* obj) {
  if (nb::detail::cleanup_guard guard{}) Py_DECREF(obj);
}

struct PythonCallable {
  std::shared_ptr<PyObject> fn;  // copies of the Function share one reference

  Value operator()(Args args) const {
    nb::gil_scoped_acquire gil;
    try {
      nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
      if (!tuple.is_valid()) throw nb::python_error();
      for (size_t i = 0; i < args.size(); ++i)
        PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), to_python(args[i]).release().ptr());
      nb::object result = nb::steal(PyObject_Call(fn.get(), tuple.ptr(), nullptr));
      if (!result.is_valid()) throw nb::python_error();
      return to_value(result);
    } catch (nb::python_error& e) {
      throw PythonError(std::move(e));
    }
  }
};

std::vector<Value> to_values(const nb::args& args) {
  std::vector<Value> values;
  values.reserve(args.size());
  for (nb::handle a : args) values.push_back(to_value(a));
  return values;
}

}  // namespace

Function function_from_callable(nb::handle callable, std::string name) {
  if (!PyCallable_Check(callable.ptr()))
    type_error("expected a callable, got '", Py_TYPE(callable.ptr())->tp_name, "'");
  Py_INCREF(callable.ptr());
  PythonCallable body{std::shared_ptr<PyObject>(callable.ptr(), release_object)};
  return Function::from_packed(std::move(body), std::move(name));
}

void init_function(nb::module_& m) {
  nb::class_<Function>(m, "Function",
                       "A function of the Anvil runtime (TVM's PackedFunc): a kernel, a registered global\n"
                       "function or a wrapped Python callable. Call it with positional arguments.")
      .def(
          "__call__",
          [](const Function& f, nb::args args) {
            std::vector<Value> values = to_values(args);
            Value result;
            {
              nb::gil_scoped_release release;
              result = f.call(values);
            }
            return to_python(result);
          },
          "Calls the function; arguments and the result convert as described in anvil.runtime.")
      .def_prop_ro(
          "name", [](const Function& f) { return f.name(); }, "The name used in error messages.")
      .def(
          "same_as", [](const Function& a, const Function& b) { return a.node() == b.node(); },
          "True when both refer to the same function object.")
      .def("__repr__", [](const Function& f) {
        return f.name().empty() ? std::string("<anvil.Function>") : "<anvil.Function " + f.name() + ">";
      });
}

}  // namespace anvil::python
