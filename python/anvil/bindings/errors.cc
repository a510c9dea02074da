// The one place that maps anvil::Error kinds to Python exception types and back, and the
// exception translator nanobind runs for every C++ exception leaving a bound function.
#include "errors.h"

#include <new>
#include <string>

namespace anvil::python {
namespace {

PyObject* g_internal_error = nullptr;  // anvil.InternalError, created in init_errors

ErrorKind kind_and_message(const nb::python_error& error, std::string* message) {
  nb::handle value = error.value();
  nb::handle type = value.type();
  ErrorKind kind = error_kind_for(type);
  std::string text;
  PyObject* str = PyObject_Str(value.ptr());
  if (str != nullptr) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(str, &size);
    if (utf8 != nullptr) text.assign(utf8, static_cast<size_t>(size));
    Py_DECREF(str);
  }
  PyErr_Clear();
  // Keep the Python type name in the message unless the kind alone names it.
  if (type.ptr() != exception_type_for(kind)) {
    const char* name = reinterpret_cast<PyTypeObject*>(type.ptr())->tp_name;
    text = std::string(name) + (text.empty() ? "" : ": " + text);
  }
  *message = std::move(text);
  return kind;
}

Error make_error(nb::python_error& error) {
  std::string message;
  ErrorKind kind = kind_and_message(error, &message);
  return Error(kind, message);
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const PythonError& e) {
    if (!e.restore()) PyErr_SetString(exception_type_for(e.kind()), e.what());
  } catch (const Error& e) {
    PyErr_SetString(exception_type_for(e.kind()), e.what());
  } catch (const std::bad_alloc&) {
    throw;  // nanobind's default translator raises MemoryError
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
}

}  // namespace

PyObject* exception_type_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kValue:
      return PyExc_ValueError;
    case ErrorKind::kType:
      return PyExc_TypeError;
    case ErrorKind::kIndex:
      return PyExc_IndexError;
    case ErrorKind::kNotImplemented:
      return PyExc_NotImplementedError;
    case ErrorKind::kRuntime:
      return PyExc_RuntimeError;
    case ErrorKind::kIO:
      return PyExc_OSError;
    case ErrorKind::kInternal:
      return g_internal_error ? g_internal_error : PyExc_RuntimeError;
  }
  return PyExc_RuntimeError;
}

ErrorKind error_kind_for(nb::handle exception_type) {
  // Most specific first: InternalError and NotImplementedError are RuntimeErrors.
  static constexpr ErrorKind kOrder[] = {ErrorKind::kInternal, ErrorKind::kNotImplemented, ErrorKind::kValue,
                                         ErrorKind::kType,     ErrorKind::kIndex,          ErrorKind::kIO,
                                         ErrorKind::kRuntime};
  for (ErrorKind kind : kOrder)
    if (PyErr_GivenExceptionMatches(exception_type.ptr(), exception_type_for(kind))) return kind;
  return ErrorKind::kRuntime;
}

PythonError::PythonError(nb::python_error&& error)
    : Error(make_error(error)), error_(std::make_shared<nb::python_error>(std::move(error))) {}

bool PythonError::restore() const {
  if (!error_ || !error_->value().is_valid()) return false;
  error_->restore();
  return true;
}

void init_errors(nb::module_& m) {
  g_internal_error = PyErr_NewExceptionWithDoc(
      "anvil.InternalError", "A bug in Anvil: an internal invariant (ANVIL_ICHECK) failed. Please report it.",
      PyExc_RuntimeError, nullptr);
  if (g_internal_error == nullptr) throw nb::python_error();
  m.attr("InternalError") = nb::handle(g_internal_error);  // the module keeps a reference too
  nb::register_exception_translator(translate);
}

}  // namespace anvil::python
