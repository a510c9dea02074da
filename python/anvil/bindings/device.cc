// anvil.Device: a DLPack (device_type, device_id) pair with TVM's printing ("cpu(0)"), TVM 0.27's
// accessors (type, index, dlpack_device_type()) and the device attributes of
// runtime/device_attrs.def as read-only properties.
#include <string>

#include "anvil/runtime/device_api.h"
#include "bindings.h"

namespace anvil::python {
namespace {

std::string device_repr(const Device& d) {
  return std::string(device_type_name(d.type)) + "(" + std::to_string(d.id) + ")";
}

// None when this build has no API for the device type (the device cannot exist here).
nb::object device_attr(const Device& d, DeviceAttr attr) {
  DeviceAPI* api = DeviceAPI::get(d, /*allow_missing=*/true);
  if (api == nullptr) return nb::none();
  Value v;
  {
    nb::gil_scoped_release release;
    v = api->get_attr(d, attr);
  }
  return to_python(v);
}

}  // namespace

void init_device(nb::module_& m) {
  m.def(
      "device_type_codes",
      [] {
        nb::dict codes;
        for (const DeviceTypeName& entry : device_type_names())
          codes[nb::str(entry.name.data(), entry.name.size())] = entry.code;
        return codes;
      },
      "Every device name and alias of runtime/device_types.def with its DLPack code, {name: code}.");
  auto cls = nb::class_<Device>(m, "Device", "A device: a DLPack device type and an ordinal, e.g. cpu(0), cuda(1).");
  cls.def(
         "__init__",
         [](Device* self, nb::handle device_type, int32_t device_id) {
           DLDeviceType type = nb::isinstance<nb::str>(device_type)
                                   ? device_type_from_name(nb::cast<std::string>(device_type))
                                   : static_cast<DLDeviceType>(to_int64(device_type, "Device: device_type"));
           if (device_id < 0) value_error("Device: the device id must be >= 0, got ", device_id);
           new (self) Device{type, device_id};
         },
         nb::arg("device_type"), nb::arg("device_id") = 0,
         "Device(device_type, device_id=0); device_type is a DLPack code (1 = cpu) or a name ('cuda').")
      .def_prop_ro(
          "device_type", [](const Device& d) { return static_cast<int>(d.type); }, "The DLPack device code.")
      .def_prop_ro(
          "device_id", [](const Device& d) { return d.id; }, "The device ordinal.")
      .def_prop_ro(
          "exist",
          [](const Device& d) {
            DeviceAPI* api = DeviceAPI::get(d, /*allow_missing=*/true);
            if (api == nullptr) return false;
            Value v = api->get_attr(d, DeviceAttr::kExist);
            return !v.is_null() && v.as_bool();
          },
          "True when the device is present and usable by this build.")
      .def(
          "dlpack_device", [](const Device& d) { return nb::make_tuple(static_cast<int>(d.type), d.id); },
          "The (device_type, device_id) pair used by the DLPack protocol.")
      // TVM 0.27's names: dev.dlpack_device_type() (the code), dev.type (the name), dev.index.
      .def(
          "dlpack_device_type", [](const Device& d) { return static_cast<int>(d.type); },
          "The DLPack device code (1 = cpu), as device_type (TVM 0.27's name).")
      .def_prop_ro(
          "type", [](const Device& d) { return std::string(device_type_name(d.type)); },
          "The device type's name: 'cpu', 'cuda', 'opencl', 'vulkan', ... (TVM 0.27's Device.type).")
      .def_prop_ro(
          "index", [](const Device& d) { return d.id; }, "The device ordinal, as device_id (TVM 0.27's name).")
      .def(
          "sync",
          [](const Device& d) {
            nb::gil_scoped_release release;
            DeviceAPI::get(d)->sync(d, nullptr);
          },
          "Waits until all work queued on the device's default stream has finished.")
      .def("__repr__", &device_repr)
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a == b; }, nb::is_operator())
      .def(
          "__ne__", [](const Device& a, const Device& b) { return !(a == b); }, nb::is_operator())
      .def("__hash__", [](const Device& d) { return std::hash<int64_t>()((int64_t{d.type} << 32) | d.id); })
      .def("__getstate__", [](const Device& d) { return nb::make_tuple(static_cast<int>(d.type), d.id); })
      .def("__setstate__", [](Device& d, nb::tuple state) {
        new (&d) Device{static_cast<DLDeviceType>(to_int64(state[0], "Device state")),
                        static_cast<int32_t>(to_int64(state[1], "Device state"))};
      });

  // One property per device attribute; "exist" has its own boolean property above.
#define ANVIL_DEVICE_ATTR(name, text, code)                                     \
  if (DeviceAttr::name != DeviceAttr::kExist)                                   \
    cls.def_prop_ro(                                                            \
        text, [](const Device& d) { return device_attr(d, DeviceAttr::name); }, \
        "The device attribute '" text "' (None when the device does not report it).");
#include "anvil/runtime/device_attrs.def"
#undef ANVIL_DEVICE_ATTR
}

}  // namespace anvil::python
