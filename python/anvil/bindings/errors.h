// Error mapping between C++ and Python. anvil::Error kinds become Python exception types (and
// back) in errors.cc only; PythonError carries a Python exception through C++ so that the very
// same exception object surfaces again when it returns to Python.
#pragma once

#include <memory>

#include "anvil/base/error.h"
#include "bindings.h"

namespace anvil::python {

// The Python exception type for an error kind (kInternal: anvil.InternalError).
PyObject* exception_type_for(ErrorKind kind);
// The error kind for a Python exception type; types outside the mapping become kRuntime.
ErrorKind error_kind_for(nb::handle exception_type);

class PythonError : public Error {
 public:
  // Takes the exception out of `error`; kind and message follow its Python type and str().
  explicit PythonError(nb::python_error&& error);
  // Puts the original exception back into Python's error indicator; false when a copy of this
  // error already did so (the caller then raises by kind and message).
  bool restore() const;

 private:
  std::shared_ptr<nb::python_error> error_;
};

}  // namespace anvil::python
