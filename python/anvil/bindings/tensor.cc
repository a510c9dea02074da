// anvil.Tensor: the C++ Tensor bound as a Python class (shape, dtype, device, copies, views), and
// numpy arrays wrapped as Tensors without a copy through the buffer protocol. The numpy-facing
// methods (numpy(), copyfrom(), __array__, __repr__) are added in python/anvil/_tensor.py.
#include <memory>
#include <optional>
#include <vector>

#include "anvil/base/error.h"
#include "bindings.h"

namespace anvil::python {
namespace {

PyObject* g_ndarray = nullptr;  // numpy.ndarray, looked up once and kept

nb::tuple int_tuple(const std::vector<int64_t>& values) {
  nb::object tuple = nb::steal(PyTuple_New(static_cast<Py_ssize_t>(values.size())));
  for (size_t i = 0; i < values.size(); ++i)
    PyTuple_SET_ITEM(tuple.ptr(), static_cast<Py_ssize_t>(i), nb::int_(values[i]).release().ptr());
  return nb::borrow<nb::tuple>(tuple);
}

// The element type of a buffer from its struct-module format and item size.
DataType dtype_from_format(const char* format, Py_ssize_t itemsize) {
  std::string_view f = format ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f.remove_prefix(1);
  auto bits = static_cast<uint8_t>(itemsize * 8);
  if (f.size() == 1) {
    switch (f[0]) {
      case 'b':
      case 'h':
      case 'i':
      case 'l':
      case 'q':
      case 'n':
        return DataType(DataType::kInt, bits);
      case 'B':
      case 'H':
      case 'I':
      case 'L':
      case 'Q':
      case 'N':
        return DataType(DataType::kUInt, bits);
      case 'e':
      case 'f':
      case 'd':
        return DataType(DataType::kFloat, bits);
      case '?':
        return DataType::boolean();
      default:
        break;
    }
  }
  type_error("cannot use an array with buffer format '", format ? format : "", "' (", itemsize,
             "-byte items) as a tensor: expected bool, int8-64, uint8-64 or float16/32/64 in native byte order");
}

void release_buffer(void* p) {
  auto* view = static_cast<Py_buffer*>(p);
  if (nb::detail::cleanup_guard guard{}) PyBuffer_Release(view);
  delete view;
}

std::vector<int64_t> shape_arg(nb::handle shape) {
  if (PyIndex_Check(shape.ptr())) return {to_int64(shape, "shape")};
  std::vector<int64_t> dims;
  for (nb::handle d : shape) dims.push_back(to_int64(d, "shape dimension"));
  return dims;
}

Tensor copy_to_target(const Tensor& self, nb::handle target) {
  if (nb::isinstance<Device>(target)) {
    Device dev = nb::cast<Device>(target);
    nb::gil_scoped_release release;
    return self.copy_to(dev);
  }
  if (nb::isinstance<Tensor>(target)) {
    Tensor dst = nb::cast<Tensor>(target);
    nb::gil_scoped_release release;
    dst.copy_from(self);
    return dst;
  }
  type_error("Tensor.copyto: expected a Device or a Tensor as the target, got '", Py_TYPE(target.ptr())->tp_name, "'");
}

}  // namespace

bool is_numpy_array(nb::handle obj) {
  if (g_ndarray == nullptr) g_ndarray = nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr();
  int r = PyObject_IsInstance(obj.ptr(), g_ndarray);
  if (r < 0) throw nb::python_error();
  return r == 1;
}

// The Anvil dtype of an ml_dtypes array (bfloat16, float8_*, float4_e2m1fn, int4, uint2, ...),
// whose dtype numpy's buffer protocol cannot carry; nullopt for any other array.
std::optional<DataType> low_precision_dtype(nb::handle array) {
  nb::object dtype = array.attr("dtype");
  constexpr int kNumpyUserDefinedTypes = 256;  // NPY_USERDEF: ml_dtypes' types are numbered from it
  if (nb::cast<int>(dtype.attr("num")) < kNumpyUserDefinedTypes) return std::nullopt;
  try {
    DataType t = DataType::parse(nb::cast<std::string>(dtype.attr("name")));
    if (t.is_low_precision_float() || t.is_sub_byte_int()) return t;
  } catch (const Error&) {
  }
  return std::nullopt;
}

Tensor tensor_from_numpy(nb::handle array, bool require_writable) {
  if (std::optional<DataType> lowp = low_precision_dtype(array)) {
    // The same bytes viewed as the storage integer (one element per byte; bfloat16 two), then
    // retyped: no copy, the view keeps the array alive.
    Tensor raw = tensor_from_numpy(array.attr("view")(lowp->bits() == 16 ? "uint16" : "uint8"), require_writable);
    auto keep = std::make_shared<Tensor>(raw);
    return Tensor::wrap(raw.data(), raw.shape(), *lowp, Device::cpu(), std::shared_ptr<void>(keep, keep.get()),
                        raw.strides());
  }
  auto* view = new Py_buffer{};
  bool writable = true;
  if (PyObject_GetBuffer(array.ptr(), view, PyBUF_RECORDS) != 0) {
    if (require_writable) {
      delete view;
      throw nb::python_error();
    }
    PyErr_Clear();
    writable = false;
    if (PyObject_GetBuffer(array.ptr(), view, PyBUF_RECORDS_RO) != 0) {
      delete view;
      throw nb::python_error();
    }
  }
  std::shared_ptr<void> owner(view, release_buffer);
  DataType dtype = dtype_from_format(view->format, view->itemsize);
  std::vector<int64_t> shape(static_cast<size_t>(view->ndim)), strides(static_cast<size_t>(view->ndim));
  for (int i = 0; i < view->ndim; ++i) {
    shape[i] = view->shape[i];
    if (view->strides[i] % view->itemsize != 0)
      value_error("cannot wrap a numpy array whose stride ", view->strides[i], " (dimension ", i,
                  ") is not a multiple of its item size ", view->itemsize);
    strides[i] = view->strides[i] / view->itemsize;
  }
  Tensor t = Tensor::wrap(view->buf, shape, dtype, Device::cpu(), std::move(owner), strides);
  if (writable) return t;
  // A read-only array must not be written through: hand out a private copy instead.
  Tensor copy = Tensor::empty(shape, dtype, Device::cpu());
  copy.copy_from(t);
  return copy;
}

void init_tensor(nb::module_& m) {
  auto cls = nb::class_<Tensor>(m, "Tensor",
                                "An n-dimensional array on a device (TVM's NDArray). Create one with anvil.tensor, "
                                "anvil.empty or anvil.from_dlpack.")
                 .def_prop_ro(
                     "shape", [](const Tensor& t) { return int_tuple(t.shape()); }, "The shape, a tuple of ints.")
                 .def_prop_ro(
                     "dtype", [](const Tensor& t) { return t.dtype().to_string(); },
                     "The element type as a string, e.g. 'float32'.")
                 .def_prop_ro(
                     "device", [](const Tensor& t) { return t.device(); }, "The Device holding the data.")
                 .def_prop_ro(
                     "ndim", [](const Tensor& t) { return t.ndim(); }, "The number of dimensions.")
                 .def_prop_ro(
                     "strides", [](const Tensor& t) { return int_tuple(t.strides()); },
                     "Strides in elements (not bytes as in numpy); row-major strides for compact tensors.")
                 .def_prop_ro(
                     "size", [](const Tensor& t) { return t.numel(); }, "The number of elements.")
                 .def_prop_ro(
                     "nbytes", [](const Tensor& t) { return t.nbytes(); }, "The size of the elements in bytes.")
                 .def_prop_ro(
                     "data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.data()); },
                     "The address of element 0 (base pointer plus byte offset), as an int.")
                 .def_prop_ro(
                     "is_contiguous", [](const Tensor& t) { return t.is_contiguous(); },
                     "True when the elements are compact and row-major.")
                 .def(
                     "same_as", [](const Tensor& a, const Tensor& b) { return a.same_as(b); },
                     "True when both refer to the same tensor object.")
                 .def(
                     "view",
                     [](const Tensor& t, nb::handle shape, std::optional<std::string> dtype) {
                       std::vector<int64_t> dims = shape.is_none() ? t.shape() : shape_arg(shape);
                       std::optional<DataType> type;
                       if (dtype) type = DataType::parse(*dtype);
                       return t.view(dims, type);
                     },
                     nb::arg("shape") = nb::none(), nb::arg("dtype") = nb::none(),
                     "A tensor sharing this one's memory with another shape and/or dtype (e.g. t.view(dtype='uint16')\n"
                     "for the raw bits of a bfloat16 tensor). The tensor must be contiguous and the view must fit.")
                 .def("copyto", &copy_to_target, nb::arg("target"),
                      "Copies into `target`: a Device (returns a new Tensor there) or a Tensor of the same shape\n"
                      "and dtype (returns `target`).")
                 .def(
                     "_copy_from",
                     [](Tensor& self, nb::handle source) {
                       Tensor src =
                           nb::isinstance<Tensor>(source) ? nb::cast<Tensor>(source) : tensor_from_numpy(source);
                       nb::gil_scoped_release release;
                       self.copy_from(src);
                     },
                     "Copies a Tensor or numpy array of the same shape and dtype into this tensor.")
                 .def(
                     "_copy_to_numpy",
                     [](const Tensor& self, nb::handle array) {
                       Tensor dst = tensor_from_numpy(array, /*require_writable=*/true);
                       nb::gil_scoped_release release;
                       dst.copy_from(self);
                     },
                     "Copies this tensor into a writable numpy array of the same shape and dtype.");
  def_dlpack_methods(cls);

  m.def(
      "empty",
      [](nb::handle shape, const std::string& dtype, const Device& device) {
        return Tensor::empty(shape_arg(shape), DataType::parse(dtype), device);
      },
      nb::arg("shape"), nb::arg("dtype"), nb::arg("device"), "An uninitialised compact tensor.");
}

}  // namespace anvil::python
