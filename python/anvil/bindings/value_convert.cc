// Python <-> Value conversion: the rules for every argument and result that crosses the boundary.
//   None, bool, int, float, str, bytes/bytearray  <->  null, bool, int, float, string, bytes
//   anvil.Device, Tensor, Function, runtime.Module, runtime.Object  <->  the same objects
//   list / tuple  ->  array (-> list);  runtime.ShapeTuple  <->  shape;  dtype  ->  str
//   numpy arrays  ->  Tensor over the array's memory (no copy; read-only arrays are copied)
//   numpy scalars  ->  their Python value;  ctypes.c_void_p  <->  handle
//   other objects with __dlpack__  ->  Tensor (no copy);  other callables  ->  Function
#include <limits>
#include <vector>

#include "anvil/base/error.h"
#include "bindings.h"
#include "object_ref.h"

namespace anvil::python {
namespace {

// Classes looked up once and then kept for the life of the process (never released: they may
// be needed until the interpreter shuts down).
PyObject* g_shape_class = nullptr;  // anvil.runtime.ShapeTuple, set by the package
PyObject* g_numpy_generic = nullptr;
PyObject* g_void_p = nullptr;

PyObject* cached_attr(PyObject** slot, const char* module, const char* name) {
  if (*slot == nullptr) *slot = nb::object(nb::module_::import_(module).attr(name)).release().ptr();
  return *slot;
}

bool isinstance_of(nb::handle obj, PyObject* type) {
  int r = PyObject_IsInstance(obj.ptr(), type);
  if (r < 0) throw nb::python_error();
  return r == 1;
}

Value sequence_to_array(nb::handle seq) {
  nb::object fast = nb::steal(PySequence_Fast(seq.ptr(), "expected a sequence"));
  if (!fast.is_valid()) throw nb::python_error();
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast.ptr());
  PyObject** items = PySequence_Fast_ITEMS(fast.ptr());
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  for (Py_ssize_t i = 0; i < n; ++i) out.push_back(to_value(items[i]));
  return Value(std::move(out));
}

std::vector<int64_t> int_list(nb::handle seq) {
  std::vector<int64_t> dims;
  for (nb::handle item : seq) dims.push_back(to_int64(item, "shape dimension"));
  return dims;
}

}  // namespace

int64_t to_int64(nb::handle obj, const char* what) {
  nb::object index = nb::steal(PyNumber_Index(obj.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    type_error(what, ": expected an int, got '", Py_TYPE(obj.ptr())->tp_name, "'");
  }
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  if (overflow != 0)
    value_error(what, ": the Python int ", nb::str(index).c_str(), " does not fit in a 64-bit signed integer");
  return static_cast<int64_t>(v);
}

Value to_value(nb::handle obj) {
  PyObject* p = obj.ptr();
  if (p == Py_None) return Value();
  if (PyBool_Check(p)) return Value(p == Py_True);
  if (PyLong_Check(p)) return Value(to_int64(obj, "argument"));
  if (PyFloat_Check(p)) return Value(PyFloat_AS_DOUBLE(p));
  if (PyUnicode_Check(p)) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(p, &size);
    if (data == nullptr) throw nb::python_error();
    return Value(std::string(data, static_cast<size_t>(size)));
  }
  if (PyBytes_Check(p))
    return Value::bytes(std::string(PyBytes_AS_STRING(p), static_cast<size_t>(PyBytes_GET_SIZE(p))));
  if (PyByteArray_Check(p))
    return Value::bytes(std::string(PyByteArray_AS_STRING(p), static_cast<size_t>(PyByteArray_GET_SIZE(p))));
  if (nb::isinstance<Tensor>(obj)) return Value(nb::cast<const Tensor&>(obj));
  if (nb::isinstance<Device>(obj)) return Value(nb::cast<Device>(obj));
  if (nb::isinstance<Function>(obj)) return Value(nb::cast<const Function&>(obj));
  if (nb::isinstance<Module>(obj)) return Value(nb::cast<const Module&>(obj));
  if (nb::isinstance<ObjectRef>(obj)) return Value::object(nb::cast<const ObjectRef&>(obj).ref);
  if (g_shape_class != nullptr && isinstance_of(obj, g_shape_class)) return Value::shape(int_list(obj));
  if (PyTuple_Check(p) || PyList_Check(p)) return sequence_to_array(obj);
  if (is_numpy_array(obj)) return Value(tensor_from_numpy(obj));
  if (isinstance_of(obj, cached_attr(&g_numpy_generic, "numpy", "generic"))) return to_value(obj.attr("item")());
  if (isinstance_of(obj, cached_attr(&g_void_p, "ctypes", "c_void_p"))) {
    nb::object address = obj.attr("value");
    return Value::handle(address.is_none() ? nullptr : reinterpret_cast<void*>(nb::cast<uintptr_t>(address)));
  }
  if (nb::hasattr(obj, "__dlpack__")) return Value(tensor_from_dlpack(obj));
  if (PyCallable_Check(p)) {
    std::string name = nb::hasattr(obj, "__qualname__") ? nb::cast<std::string>(nb::str(obj.attr("__qualname__")))
                                                        : std::string("<python callable>");
    return Value(function_from_callable(obj, std::move(name)));
  }
  type_error("cannot pass a Python object of type '", Py_TYPE(p)->tp_name,
             "' to Anvil: expected None, bool, int, float, str, bytes, Device, Tensor, numpy array, list, tuple, "
             "Function, Module or a callable");
}

nb::object to_python(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kNull:
      return nb::none();
    case ValueKind::kInt:
      return nb::int_(v.as_int());
    case ValueKind::kFloat:
      return nb::float_(v.as_float());
    case ValueKind::kBool:
      return nb::bool_(v.as_bool());
    case ValueKind::kHandle: {
      nb::object void_p = nb::borrow(cached_attr(&g_void_p, "ctypes", "c_void_p"));
      void* ptr = v.as_handle();
      return ptr == nullptr ? void_p() : void_p(reinterpret_cast<uintptr_t>(ptr));
    }
    case ValueKind::kDevice:
      return nb::cast(v.as_device());
    case ValueKind::kDataType:
      return nb::str(v.as_dtype().to_string().c_str());
    case ValueKind::kString: {
      const std::string& s = v.as_string();
      PyObject* str = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "surrogateescape");
      if (str == nullptr) throw nb::python_error();
      return nb::steal(str);
    }
    case ValueKind::kBytes: {
      const std::string& b = v.as_bytes();
      return nb::bytes(b.data(), b.size());
    }
    case ValueKind::kShape: {
      const auto& dims = v.as_shape();
      nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(dims.size())));
      for (size_t i = 0; i < dims.size(); ++i)
        PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), nb::int_(dims[i]).release().ptr());
      return g_shape_class != nullptr ? nb::borrow(g_shape_class)(tuple) : tuple;
    }
    case ValueKind::kTensor:
      return nb::cast(v.as_tensor());
    case ValueKind::kFunction:
      return nb::cast(v.as_function());
    case ValueKind::kModule:
      return nb::cast(v.as_module());
    case ValueKind::kArray: {
      nb::list out;
      for (const Value& item : v.as_array()) out.append(to_python(item));
      return out;
    }
    case ValueKind::kObject:
      return nb::cast(ObjectRef{v.as_object()});
  }
  type_error("cannot convert a value of kind ", v.kind_name(), " to Python");
}

void init_value_convert(nb::module_& m) {
  nb::class_<ObjectRef>(m, "Object", "An Anvil runtime object with no dedicated Python class.")
      .def_prop_ro(
          "type_key", [](const ObjectRef& o) { return std::string(o.ref->type_key()); },
          "The object's type name, e.g. 'runtime.Closure'.")
      .def(
          "same_as", [](const ObjectRef& a, const ObjectRef& b) { return a.ref == b.ref; },
          "True when both refer to the same C++ object.")
      .def("__repr__",
           [](const ObjectRef& o) { return "<anvil.runtime.Object " + std::string(o.ref->type_key()) + ">"; });

  m.def("_set_shape_class", [](nb::handle cls) {
    nb::handle(cls).inc_ref();
    if (g_shape_class != nullptr) nb::handle(g_shape_class).dec_ref();
    g_shape_class = cls.ptr();
  });
}

}  // namespace anvil::python
