// Lowering and building for Python (anvil.lower, anvil.build): PrimFunc (printable, runnable in
// the reference interpreter) and pipeline::lower / pipeline::build. The source text of built
// modules (get_source) is the global function "runtime.ModuleGetSource" (codegen/module_source.h,
// registered in module.cc). anvil.target.Target's parser (te.target_parse). The te submodule's
// initialiser lives here too.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <variant>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/pipeline/build.h"
#include "anvil/tir/interpreter.h"
#include "anvil/tir/printer.h"
#include "te_bindings.h"

namespace anvil::python {
namespace {

// The kernel's parameters in order: te.Tensor (buffer parameters) and te.var / te.size_var
// (scalar parameters).
std::vector<te::LowerArg> lower_args(nb::handle args) {
  std::vector<te::LowerArg> out;
  size_t i = 0;
  for (nb::handle a : args) {
    if (nb::isinstance<te::Tensor>(a)) {
      out.emplace_back(nb::cast<te::Tensor>(a));
    } else if (nb::isinstance<ir::Var>(a)) {
      out.emplace_back(nb::cast<ir::Var>(a));
    } else {
      type_error("argument ", i, ": expected a te.Tensor or a scalar te.var, got '", Py_TYPE(a.ptr())->tp_name, "'");
    }
    ++i;
  }
  return out;
}

pipeline::BuildOptions options(bool dump_ir) {
  pipeline::BuildOptions o;
  o.dump_ir = dump_ir;
  return o;
}

std::string func_name(const tir::PrimFunc& f) { return f->str_attr(tir::attr::kGlobalSymbol).value_or("main"); }

// Runs f in the reference interpreter: tensors (anvil.Tensor, numpy arrays) for buffer params,
// ints and floats for scalar params.
void interpret(const tir::PrimFunc& f, nb::args args) {
  std::vector<Value> keep;  // owns converted tensors while the interpreter runs
  std::vector<tir::InterpArg> iargs;
  for (nb::handle a : args) {
    Value v = to_value(a);
    switch (v.kind()) {
      case ValueKind::kTensor:
        keep.push_back(v);
        iargs.emplace_back(keep.back().as_tensor().dl());
        break;
      case ValueKind::kInt:
        iargs.emplace_back(v.as_int());
        break;
      case ValueKind::kFloat:
        iargs.emplace_back(v.as_float());
        break;
      default:
        type_error(func_name(f), ": interpreter arguments are tensors, ints or floats, got '",
                   Py_TYPE(a.ptr())->tp_name, "'");
    }
  }
  nb::gil_scoped_release release;
  tir::run_prim_func(f, iargs);
}

nb::object option_value(const TargetOptionValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return nb::cast(*s);
  if (const auto* n = std::get_if<int64_t>(&v)) return nb::cast(*n);
  if (const auto* b = std::get_if<bool>(&v)) return nb::cast(*b);
  return nb::cast(std::get<std::vector<std::string>>(v));
}

// What anvil.target.Target keeps of a parsed target: canonical text, kind, written host, options.
nb::dict target_info(const Target& t) {
  nb::dict out;
  out["str"] = t.str();
  out["kind"] = std::string(t.kind_name());
  out["is_host_kind"] = t.is_host_kind();
  out["host"] = t.has_host() ? nb::cast(t.host().str()) : nb::none();
  nb::dict attrs;
  for (std::string_view key : Target::option_keys(t.kind()))
    if (auto v = t.get(key)) attrs[nb::cast(std::string(key))] = option_value(*v);
  out["attrs"] = attrs;
  return out;
}

}  // namespace

void init_te_build(nb::module_& te) {
  nb::class_<tir::PrimFunc>(te, "PrimFunc", "A lowered kernel of the loop-level IR; str() prints it.")
      .def_prop_ro("name", &func_name)
      .def_prop_ro("params",
                   [](const tir::PrimFunc& f) {
                     nb::list out;
                     for (const ir::Var& p : f->params()) out.append(nb::cast(p));
                     return out;
                   })
      .def("script", [](const tir::PrimFunc& f) { return tir::to_string(f); })
      .def("interpret", &interpret,
           "Runs the function in the reference TIR interpreter (slow; bounds-checked): one tensor per\n"
           "buffer parameter and an int or float per scalar parameter, in order.")
      .def("__str__", [](const tir::PrimFunc& f) { return tir::to_string(f); })
      .def("__repr__", [](const tir::PrimFunc& f) { return "<anvil.tir.PrimFunc " + func_name(f) + ">"; });

  te.def(
      "lower",
      [](const te::Schedule& s, nb::handle args, const std::string& name, bool dump_ir) {
        std::vector<te::LowerArg> params = lower_args(args);
        nb::gil_scoped_release release;
        return pipeline::lower(s, params, name, options(dump_ir));
      },
      nb::arg("schedule"), nb::arg("args"), nb::arg("name"), nb::arg("dump_ir"));
  te.def(
      "build_schedule",
      [](const te::Schedule& s, nb::handle args, const std::string& target, const std::string& name, bool dump_ir) {
        std::vector<te::LowerArg> params = lower_args(args);
        Target t = Target::parse(target);
        nb::gil_scoped_release release;
        return pipeline::build(s, params, t, name, options(dump_ir));
      },
      nb::arg("schedule"), nb::arg("args"), nb::arg("target"), nb::arg("name"), nb::arg("dump_ir"));
  te.def(
      "build_funcs",
      [](const std::vector<tir::PrimFunc>& funcs, const std::string& target, bool dump_ir) {
        Target t = Target::parse(target);
        nb::gil_scoped_release release;
        return pipeline::build(funcs, t, options(dump_ir));
      },
      nb::arg("funcs"), nb::arg("target"), nb::arg("dump_ir"));
  te.def(
      "target_parse",
      [](const std::string& text, std::optional<std::string> host) {
        Target t = Target::parse(text);
        if (host) t = t.with_host(Target::parse(*host));
        return target_info(t);
      },
      nb::arg("text"), nb::arg("host").none());
  te.def("target_kinds", [] {
    std::vector<std::string> out;
    for (std::string_view k : Target::kind_names()) out.emplace_back(k);
    return out;
  });
}

void init_te_bindings(nb::module_& m) {
  nb::module_ te = m.def_submodule("te", "Tensor expressions, schedules, lowering and building (use anvil.te).");
  init_expr(te);
  init_te_schedule(te);
  init_te_build(te);
}

}  // namespace anvil::python
