// Tensor expressions and schedules for Python (anvil.te): IterVar, Tensor (also its own `op`),
// placeholder / compute / reduce_axis / sum / max / min, Schedule and Stage with TVM's
// primitives. Illegal schedules are ValueErrors raised by te/ (te/schedule.h lists them).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <string>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/te/reduction.h"
#include "anvil/te/schedule.h"
#include "te_bindings.h"

namespace anvil::python {
namespace {

using te::IterVar;
using te::Schedule;
using te::Stage;
using te::Tensor;

nb::list iter_var_list(const std::vector<IterVar>& ivs) {
  nb::list out;
  for (const IterVar& iv : ivs) out.append(nb::cast(iv));
  return out;
}

nb::list expr_list(const std::vector<ir::PrimExpr>& es) {
  nb::list out;
  for (const auto& e : es) out.append(nb::cast(e));
  return out;
}

std::vector<Tensor> tensor_list(nb::handle seq, const char* what) {
  std::vector<Tensor> out;
  if (nb::isinstance<Tensor>(seq)) {
    out.push_back(nb::cast<Tensor>(seq));
    return out;
  }
  if (!PySequence_Check(seq.ptr())) type_error(what, ": expected a tensor or a list of tensors");
  for (nb::handle item : seq) {
    if (!nb::isinstance<Tensor>(item))
      type_error(what, ": expected tensors, got '", Py_TYPE(item.ptr())->tp_name, "'");
    out.push_back(nb::cast<Tensor>(item));
  }
  return out;
}

std::vector<IterVar> axis_list(nb::handle seq, const char* what) {
  std::vector<IterVar> out;
  if (nb::isinstance<IterVar>(seq)) {
    out.push_back(nb::cast<IterVar>(seq));
    return out;
  }
  for (nb::handle item : seq) {
    if (!nb::isinstance<IterVar>(item))
      type_error(what, ": expected iteration axes (IterVar), got '", Py_TYPE(item.ptr())->tp_name, "'");
    out.push_back(nb::cast<IterVar>(item));
  }
  return out;
}

std::string describe(const IterVar& iv) {
  std::string s = "IterVar(" + iv->name();
  if (iv->dom().extent.defined())
    s += ", min=" + ir::to_string(iv->dom().min) + ", extent=" + ir::to_string(iv->dom().extent);
  return s + (iv.is_reduce() ? ", reduce)" : ")");
}

Tensor make_compute(nb::handle shape, nb::callable fcompute, const std::string& name,
                    const std::vector<std::string>& axis_names) {
  te::FCompute f = [fcompute](const std::vector<ir::Var>& vars) {
    nb::list args;
    for (const ir::Var& v : vars) args.append(nb::cast(v));
    return to_expr(fcompute(*nb::tuple(args)));
  };
  return te::compute(to_shape(shape), f, name, axis_names);
}

ir::PrimExpr reduce(const std::string& kind, nb::handle source, nb::handle axes, nb::handle where) {
  ir::PrimExpr src = to_expr(source);
  std::vector<IterVar> ivs = axis_list(axes, kind.c_str());
  if (!where.is_none()) {
    te::ReduceKind k = kind == "sum" ? te::ReduceKind::kSum : kind == "max" ? te::ReduceKind::kMax : te::ReduceKind::kMin;
    src = ir::select(to_expr(where), src, te::reduce_identity(k, src.dtype()));
  }
  if (kind == "sum") return te::sum(src, ivs);
  if (kind == "max") return te::max(src, ivs);
  if (kind == "min") return te::min(src, ivs);
  value_error("unknown reduction '", kind, "'");
}

void def_iter_var(nb::module_& te) {
  nb::class_<IterVar> cls(te, "IterVar", "An iteration axis: a loop variable with its range.");
  def_itervar_operators(cls);
  cls.def_prop_ro("var", [](const IterVar& iv) { return iv.var(); })
      .def_prop_ro("name", [](const IterVar& iv) { return iv->name(); })
      .def_prop_ro("dom",
                   [](const IterVar& iv) -> nb::object {
                     if (!iv->dom().extent.defined()) return nb::none();
                     return nb::make_tuple(iv->dom().min, iv->dom().extent);
                   })
      .def_prop_ro("iter_type", [](const IterVar& iv) { return iv.is_reduce() ? "reduce" : "data_par"; })
      .def("__str__", &describe)
      .def("__repr__", &describe);
}

void def_tensor(nb::module_& te) {
  nb::class_<Tensor>(te, "Tensor",
                     "The output of an operation (placeholder or compute); `t.op` is the tensor itself.")
      .def_prop_ro("name", &Tensor::name)
      .def_prop_ro("shape", [](const Tensor& t) { return expr_list(t.shape()); })
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype().to_string(); })
      .def_prop_ro("ndim", &Tensor::ndim)
      .def_prop_ro("op", [](const Tensor& t) { return t; })
      .def_prop_ro("is_compute", &Tensor::is_compute)
      .def_prop_ro("axis", [](const Tensor& t) { return iter_var_list(t->axis()); })
      .def_prop_ro("reduce_axis", [](const Tensor& t) { return iter_var_list(t->reduce_axis()); })
      .def_prop_ro("input_tensors",
                   [](const Tensor& t) {
                     nb::list out;
                     for (const Tensor& x : t->inputs()) out.append(nb::cast(x));
                     return out;
                   })
      .def("_index",
           [](const Tensor& t, nb::handle indices) {
             std::vector<ir::PrimExpr> idx;
             for (nb::handle i : indices) idx.push_back(to_expr(i));
             return t(std::move(idx));
           })
      .def("same_as", [](const Tensor& a, const Tensor& b) { return a.same_as(b); })
      .def("__eq__",
           [](const Tensor& a, nb::handle b) {
             return nb::isinstance<Tensor>(b) && a.same_as(nb::cast<Tensor>(b));
           })
      .def("__ne__",
           [](const Tensor& a, nb::handle b) {
             return !(nb::isinstance<Tensor>(b) && a.same_as(nb::cast<Tensor>(b)));
           })
      .def("__hash__", [](const Tensor& t) { return reinterpret_cast<intptr_t>(t.get()); });
}

void def_stage(nb::module_& te) {
  nb::class_<Stage>(te, "Stage", "The schedule of one operation: loop structure, attachment, scope.")
      .def_prop_ro("op", [](const Stage& s) { return s.op(); })
      .def_prop_ro("origin_op", [](const Stage& s) { return s->origin_op; })
      .def_prop_ro("leaf_iter_vars", [](const Stage& s) { return iter_var_list(s.leaf_iter_vars()); })
      .def_prop_ro("all_iter_vars", [](const Stage& s) { return iter_var_list(s->all_iter_vars); })
      .def_prop_ro("scope", [](const Stage& s) { return s->scope; })
      .def(
          "split",
          [](Stage& s, const IterVar& axis, nb::handle factor, nb::handle nparts) {
            if (factor.is_none() == nparts.is_none())
              value_error(s->describe(), ": split of '", axis->name(), "' takes exactly one of factor and nparts");
            return factor.is_none() ? s.split_nparts(axis, to_expr(nparts)) : s.split(axis, to_expr(factor));
          },
          nb::arg("parent"), nb::arg("factor").none() = nb::none(), nb::arg("nparts").none() = nb::none())
      .def("fuse", &Stage::fuse, nb::arg("outer"), nb::arg("inner"))
      .def("_reorder", [](Stage& s, nb::handle axes) { s.reorder(axis_list(axes, "reorder")); })
      .def(
          "tile",
          [](Stage& s, const IterVar& x, const IterVar& y, nb::handle xf, nb::handle yf) {
            return s.tile(x, y, to_expr(xf), to_expr(yf));
          },
          nb::arg("x_parent"), nb::arg("y_parent"), nb::arg("x_factor"), nb::arg("y_factor"))
      .def("vectorize", &Stage::vectorize, nb::arg("var"))
      .def("parallel", &Stage::parallel, nb::arg("var"))
      .def("unroll", &Stage::unroll, nb::arg("var"))
      .def("_bind", &Stage::bind, nb::arg("ivar"), nb::arg("thread_tag"))
      .def(
          "_pragma",
          [](Stage& s, const IterVar& axis, const std::string& key, nb::handle value) {
            ir::PrimExpr v = value.is_none()                   ? ir::PrimExpr(1)
                             : PyUnicode_Check(value.ptr()) ? ir::string_imm(nb::cast<std::string>(value))
                                                            : to_expr(value);
            s.pragma(axis, key, v);
          },
          nb::arg("var"), nb::arg("pragma_type"), nb::arg("pragma_value").none())
      .def("storage_align", &Stage::storage_align, nb::arg("axis"), nb::arg("factor"), nb::arg("offset"))
      .def("compute_at", &Stage::compute_at, nb::arg("parent"), nb::arg("scope"))
      .def("compute_inline", &Stage::compute_inline)
      .def("compute_root", &Stage::compute_root)
      .def("set_scope", &Stage::set_scope, nb::arg("scope"))
      .def("same_as", &Stage::same_as)
      .def("__repr__", [](const Stage& s) { return "<anvil.te.Stage " + s->describe() + ">"; });
}

void def_schedule(nb::module_& te) {
  nb::class_<Schedule>(te, "Schedule", "Schedules of all operations the outputs depend on: s[tensor] is a Stage.")
      .def("__getitem__", [](Schedule& s, const Tensor& t) { return Stage(s[t]); }, nb::arg("tensor"))
      .def_prop_ro("stages",
                   [](const Schedule& s) {
                     nb::list out;
                     for (const Stage& st : s->stages) out.append(nb::cast(st));
                     return out;
                   })
      .def_prop_ro("outputs",
                   [](const Schedule& s) {
                     nb::list out;
                     for (const Tensor& t : s->outputs) out.append(nb::cast(t));
                     return out;
                   })
      .def(
          "cache_read",
          [](Schedule& s, const Tensor& t, const std::string& scope, nb::handle readers) {
            return s.cache_read(t, scope, tensor_list(readers, "cache_read"));
          },
          nb::arg("tensor"), nb::arg("scope"), nb::arg("readers"))
      .def("cache_write", &Schedule::cache_write, nb::arg("tensor"), nb::arg("scope"));
}

}  // namespace

void init_te_schedule(nb::module_& te) {
  def_iter_var(te);
  def_tensor(te);
  def_stage(te);
  def_schedule(te);
  te.def(
      "placeholder",
      [](nb::handle shape, const std::string& dtype, const std::string& name) {
        return te::placeholder(to_shape(shape), to_dtype(dtype), name);
      },
      nb::arg("shape"), nb::arg("dtype"), nb::arg("name"));
  te.def("compute", &make_compute, nb::arg("shape"), nb::arg("fcompute"), nb::arg("name"), nb::arg("axis_names"));
  te.def(
      "reduce_axis", [](nb::handle lo, nb::handle hi, const std::string& name) {
        return te::reduce_axis(to_expr(lo), to_expr(hi), name);
      },
      nb::arg("lo"), nb::arg("hi"), nb::arg("name"));
  te.def("reduce", &reduce, nb::arg("kind"), nb::arg("source"), nb::arg("axis"), nb::arg("where").none());
  te.def(
      "create_schedule", [](nb::handle ops) { return te::create_schedule(tensor_list(ops, "create_schedule")); },
      nb::arg("ops"));
}

}  // namespace anvil::python
