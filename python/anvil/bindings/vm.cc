// The VM's C++ half in anvil._ffi: creating a VirtualMachine (devices, allocator per device
// type), the executable's bytes, and _ExecBuilder, the builder that anvil.runtime.ExecBuilder
// (python/anvil/runtime/vm.py) wraps. Everything else — calling functions, set_input,
// time_evaluator, profile — goes through the VM module's functions, as it would over RPC.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <utility>
#include <vector>

#include "anvil/runtime/vm/exec_builder.h"
#include "anvil/runtime/vm/vm.h"
#include "bindings.h"

namespace anvil::python {
namespace {

using vm::Arg;
using vm::ExecBuilder;

// Arguments arrive from vm.py as (kind, value) pairs; function names are already indices.
std::vector<Arg> to_args(const std::vector<std::pair<std::string, int64_t>>& pairs) {
  std::vector<Arg> args;
  args.reserve(pairs.size());
  for (const auto& [kind, value] : pairs) {
    if (kind == "reg") args.push_back(Arg::reg(value));
    else if (kind == "imm") args.push_back(Arg::imm(value));
    else if (kind == "const") args.push_back(Arg::constant(value));
    else if (kind == "func") args.push_back(Arg::func(value));
    else if (kind == "vm") args.push_back(Arg::vm());
    else if (kind == "void") args.push_back(Arg::void_value());
    else value_error("ExecBuilder: unknown argument kind '", kind, "' (expected reg, imm, const, func, vm or void)");
  }
  return args;
}

// A destination or result register; None means "no register" (the result is dropped / null).
vm::RegName to_register(nb::handle reg, const char* what) {
  return reg.is_none() ? vm::kVoidRegister : to_int64(reg, what);
}

Module create_vm(const Module& module, const std::vector<Device>& devices, const std::string& default_kind,
                 const std::vector<std::pair<int64_t, std::string>>& per_device_type) {
  vm::MemoryConfig memory;
  memory.default_kind = allocator_kind_from_name(default_kind);
  for (const auto& [type, kind] : per_device_type)
    memory.per_device_type[static_cast<DLDeviceType>(type)] = allocator_kind_from_name(kind);
  nb::gil_scoped_release release;  // constants may be copied to the device
  return vm::VirtualMachine::create(module, devices, memory).as_module();
}

}  // namespace

void init_vm(nb::module_& m) {
  m.def("_vm_create", &create_vm, nb::arg("module"), nb::arg("devices"), nb::arg("default_kind"),
        nb::arg("per_device_type"),
        "A VirtualMachine module over the executable in `module` (an executable or a library holding one).");
  m.def(
      "_vm_find_executable", [](const Module& module) { return vm::Executable::from_module(module).as_module(); },
      nb::arg("module"), "The executable module itself, or the one in a library's import tree (ValueError if none).");
  m.def(
      "_vm_executable_save",
      [](const Module& module) {
        std::string bytes;
        {
          nb::gil_scoped_release release;
          bytes = vm::Executable::from_module(module)->save_to_bytes();
        }
        return nb::bytes(bytes.data(), bytes.size());
      },
      nb::arg("module"));

  nb::class_<ExecBuilder>(m, "_ExecBuilder", "The C++ ExecBuilder; use anvil.runtime.ExecBuilder.")
      .def(nb::init<>())
      .def("declare_function", &ExecBuilder::declare_function, nb::arg("name"), nb::arg("param_names"))
      .def("begin_function", &ExecBuilder::begin_function, nb::arg("name"), nb::arg("param_names"))
      .def("end_function", &ExecBuilder::end_function)
      .def("function_index", &ExecBuilder::function_index, nb::arg("name"))
      .def(
          "emit_call",
          [](ExecBuilder& b, int64_t func_index, const std::vector<std::pair<std::string, int64_t>>& args,
             nb::handle dst) { return b.emit_call(func_index, to_args(args), to_register(dst, "emit_call: dst")); },
          nb::arg("func_index"), nb::arg("args"), nb::arg("dst").none())
      .def(
          "emit_ret", [](ExecBuilder& b, nb::handle result) { return b.emit_ret(to_register(result, "emit_ret: result")); },
          nb::arg("result").none())
      .def("emit_goto", &ExecBuilder::emit_goto, nb::arg("pc_offset"))
      .def(
          "emit_if", [](ExecBuilder& b, int64_t cond, int64_t false_offset) { return b.emit_if(cond, false_offset); },
          nb::arg("cond"), nb::arg("false_offset"))
      .def("patch_jump", &ExecBuilder::patch_jump, nb::arg("instr_index"), nb::arg("offset"))
      .def("next_instr", &ExecBuilder::next_instr)
      .def(
          "add_constant", [](ExecBuilder& b, nb::handle value) { return b.add_constant(to_value(value)); },
          nb::arg("value"))
      .def(
          "int_arg",
          [](ExecBuilder& b, int64_t value) {
            Arg a = b.int_arg(value);
            return std::make_pair(std::string(a.kind == vm::ArgKind::kImmediate ? "imm" : "const"), a.value);
          },
          nb::arg("value"))
      .def("get", [](ExecBuilder& b) { return b.get().as_module(); });
}

}  // namespace anvil::python
