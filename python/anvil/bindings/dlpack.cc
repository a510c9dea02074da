// DLPack exchange, both ways and without copies. Tensor.__dlpack__ hands out a versioned capsule
// ("dltensor_versioned", DLPack 1.0) when the consumer asks for max_version >= (1, 0) — numpy 2
// marks arrays from legacy capsules read-only — and a legacy "dltensor" capsule otherwise.
// from_dlpack consumes either kind and renames the capsule "used_..." as the protocol requires;
// the producer's deleter runs exactly once, when the last Anvil reference to the tensor goes.
// Debian's dlpack.h is 0.6, without the versioned struct: its 1.0 layout is declared below.
#include <dlpack/dlpack.h>

#include <optional>

#include "anvil/base/error.h"
#include "bindings.h"

namespace anvil::python {
namespace {

// DLPack 1.0 (dlpack.h, DLPACK_MAJOR_VERSION 1): the versioned managed tensor, ABI-stable.
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned* self);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagReadOnly = 1;  // DLPACK_FLAG_BITMASK_READ_ONLY
constexpr uint64_t kFlagIsCopied = 2;  // DLPACK_FLAG_BITMASK_IS_COPIED

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kUsedLegacyName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kUsedVersionedName = "used_dltensor_versioned";

// Capsule destructors: a consumer that took the tensor renamed the capsule first.
void legacy_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kUsedLegacyName)) return;
  nb::error_scope scope;  // may run while an exception is pending
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
  if (managed == nullptr) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (managed->deleter) managed->deleter(managed);
}

void versioned_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, kUsedVersionedName)) return;
  nb::error_scope scope;
  auto* managed = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
  if (managed == nullptr) {
    PyErr_WriteUnraisable(capsule);
    return;
  }
  if (managed->deleter) managed->deleter(managed);
}

[[noreturn]] void buffer_error(const std::string& message) {
  PyErr_SetString(PyExc_BufferError, message.c_str());
  throw nb::python_error();
}

nb::object legacy_capsule(const Tensor& t) {
  DLManagedTensor* managed = t.to_dlpack();
  PyObject* capsule = PyCapsule_New(managed, kLegacyName, legacy_capsule_destructor);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

// The versioned struct wraps the legacy one Tensor::to_dlpack makes (which owns the tensor).
nb::object versioned_capsule(const Tensor& t, bool copied) {
  DLManagedTensor* legacy = t.to_dlpack();
  auto* managed = new DLManagedTensorVersioned{};
  managed->version = {1, 0};
  managed->manager_ctx = legacy;
  managed->deleter = [](DLManagedTensorVersioned* self) {
    auto* inner = static_cast<DLManagedTensor*>(self->manager_ctx);
    inner->deleter(inner);
    delete self;
  };
  managed->flags = copied ? kFlagIsCopied : 0;
  managed->dl_tensor = legacy->dl_tensor;
  PyObject* capsule = PyCapsule_New(managed, kVersionedName, versioned_capsule_destructor);
  if (capsule == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  return nb::steal(capsule);
}

nb::object dlpack(const Tensor& self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                  std::optional<bool> copy) {
  (void)stream;  // copies below synchronise; there is no asynchronous work to order
  bool versioned = false;
  if (!max_version.is_none()) versioned = to_int64(max_version[0], "__dlpack__: max_version") >= 1;
  Device target = self.device();
  if (!dl_device.is_none())
    target = Device{static_cast<DLDeviceType>(to_int64(dl_device[0], "__dlpack__: dl_device")),
                    static_cast<int32_t>(to_int64(dl_device[1], "__dlpack__: dl_device"))};
  Tensor out = self;
  bool copied = false;
  if (!(target == self.device())) {
    if (copy.has_value() && !*copy)
      buffer_error("Tensor.__dlpack__: the tensor is on " + self.device().to_string() + ", not on " +
                   target.to_string() + ", and copy=False forbids a copy");
    copied = true;
  } else if (copy.value_or(false)) {
    copied = true;
  }
  if (copied) {
    nb::gil_scoped_release release;
    out = self.copy_to(target);
  }
  return versioned ? versioned_capsule(out, copied) : legacy_capsule(out);
}

void check_importable(const DLTensor& t) {
  if (!DataType(t.dtype).is_tensor_element())
    type_error("from_dlpack: a tensor cannot hold elements of type ", DataType(t.dtype).to_string(),
               " (supported: bool, int8-64, uint8-64, float16/32/64, bfloat16)");
  if (t.ndim < 0) value_error("from_dlpack: negative ndim ", t.ndim);
}

Tensor import_versioned(nb::handle capsule) {
  auto* managed = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule.ptr(), kVersionedName));
  if (managed == nullptr) throw nb::python_error();
  if (managed->version.major != 1)
    value_error("from_dlpack: DLPack version ", managed->version.major, ".", managed->version.minor,
                " is not supported (expected 1.x)");
  const DLTensor& t = managed->dl_tensor;
  check_importable(t);
  if (PyCapsule_SetName(capsule.ptr(), kUsedVersionedName) != 0) throw nb::python_error();
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensorVersioned*>(p);
    if (m->deleter) m->deleter(m);
  });
  std::span<const int64_t> shape(t.shape, static_cast<size_t>(t.ndim));
  std::span<const int64_t> strides;
  if (t.strides != nullptr) strides = std::span<const int64_t>(t.strides, static_cast<size_t>(t.ndim));
  Tensor tensor = Tensor::wrap(t.data, shape, DataType(t.dtype), Device::from_dl(t.device), std::move(owner), strides,
                               t.byte_offset);
  if (!(managed->flags & kFlagReadOnly)) return tensor;
  // Anvil tensors are writable: a read-only producer gets a private copy instead.
  nb::gil_scoped_release release;
  return tensor.copy_to(tensor.device());
}

Tensor import_legacy(nb::handle capsule) {
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kLegacyName));
  if (managed == nullptr) throw nb::python_error();
  check_importable(managed->dl_tensor);  // while the capsule still owns the tensor
  if (PyCapsule_SetName(capsule.ptr(), kUsedLegacyName) != 0) throw nb::python_error();
  return Tensor::from_dlpack(managed);  // owns `managed` from here on, also if it throws
}

}  // namespace

Tensor tensor_from_dlpack(nb::handle obj) {
  nb::object capsule;
  if (PyCapsule_CheckExact(obj.ptr())) {
    capsule = nb::borrow(obj);
  } else if (nb::hasattr(obj, "__dlpack__")) {
    nb::object method = obj.attr("__dlpack__");
    try {
      capsule = method(nb::arg("max_version") = nb::make_tuple(1, 0));
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      capsule = method();  // a producer that predates max_version
    }
    if (!PyCapsule_CheckExact(capsule.ptr()))
      type_error("from_dlpack: ", Py_TYPE(obj.ptr())->tp_name, ".__dlpack__() returned a ",
                 Py_TYPE(capsule.ptr())->tp_name, ", not a PyCapsule");
  } else {
    type_error("from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got '",
               Py_TYPE(obj.ptr())->tp_name, "'");
  }
  if (PyCapsule_IsValid(capsule.ptr(), kVersionedName)) return import_versioned(capsule);
  if (PyCapsule_IsValid(capsule.ptr(), kLegacyName)) return import_legacy(capsule);
  if (PyCapsule_IsValid(capsule.ptr(), kUsedLegacyName) || PyCapsule_IsValid(capsule.ptr(), kUsedVersionedName))
    value_error("from_dlpack: the DLPack capsule was already consumed (a capsule can be imported only once)");
  const char* name = PyCapsule_GetName(capsule.ptr());
  PyErr_Clear();
  type_error("from_dlpack: expected a capsule named 'dltensor' or 'dltensor_versioned', got '", name ? name : "(null)",
             "'");
}

void def_dlpack_methods(nb::class_<Tensor>& cls) {
  cls.def("__dlpack__", &dlpack, nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(),
          nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
          "Exports the tensor as a DLPack capsule sharing its memory: versioned ('dltensor_versioned')\n"
          "when max_version >= (1, 0), legacy ('dltensor') otherwise. A copy is made only for copy=True\n"
          "or a dl_device other than the tensor's (refused when copy=False). `stream` is accepted and\n"
          "ignored: Anvil's copies synchronise before returning.")
      .def(
          "__dlpack_device__",
          [](const Tensor& t) { return nb::make_tuple(static_cast<int>(t.device().type), t.device().id); },
          "The (device_type, device_id) pair of the DLPack protocol.");
}

void init_dlpack(nb::module_& m) {
  m.def("from_dlpack", &tensor_from_dlpack, nb::arg("obj"),
        "Imports an object with __dlpack__ (numpy, torch, ...) or a DLPack capsule, sharing its memory.");
}

}  // namespace anvil::python
