// Expressions for Python (anvil.tir / anvil.te): PrimExpr and Var with Python's operators, the
// literal conversion rules (to_expr) and the intrinsic functions (exp, floordiv, select, cast...).
// Dtype promotion is ir/expr_ops.h's; errors come from there as TypeError / ValueError.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/printer.h"
#include "anvil/te/tensor.h"
#include "te_bindings.h"

namespace anvil::python {
namespace {

using ir::PrimExpr;

// An operand before the operator decides its dtype: literals stay literals so that they adopt
// the other operand's type (expr_ops.h rule 2).
using Operand = std::variant<PrimExpr, int64_t, double>;

bool try_operand(nb::handle obj, Operand* out) {
  PyObject* p = obj.ptr();
  if (nb::isinstance<PrimExpr>(obj)) {
    *out = nb::cast<PrimExpr>(obj);
  } else if (nb::isinstance<te::IterVar>(obj)) {
    *out = PrimExpr(nb::cast<te::IterVar>(obj).var());
  } else if (PyBool_Check(p)) {
    *out = ir::bool_imm(p == Py_True);
  } else if (PyLong_Check(p) || (PyIndex_Check(p) && !PyFloat_Check(p))) {
    *out = to_int64(obj, "expression operand");
  } else if (PyFloat_Check(p) || (Py_TYPE(p)->tp_as_number && Py_TYPE(p)->tp_as_number->nb_float &&
                                   !PyUnicode_Check(p) && !PySequence_Check(p))) {
    double v = PyFloat_AsDouble(p);
    if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
    *out = v;
  } else {
    return false;
  }
  return true;
}

Operand to_operand(nb::handle obj) {
  Operand out;
  if (!try_operand(obj, &out))
    type_error("expected an expression or a number, got '", Py_TYPE(obj.ptr())->tp_name, "'");
  return out;
}

PrimExpr literal_expr(int64_t v) {
  bool fits32 = v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return ir::int_imm(v, fits32 ? DataType::int32() : DataType::int64());
}
PrimExpr literal_expr(double v) { return PrimExpr(v); }
PrimExpr literal_expr(const PrimExpr& e) { return e; }

PrimExpr operand_expr(const Operand& o) {
  return std::visit([](const auto& v) { return literal_expr(v); }, o);
}

// f(a, b) over the overloads of an expr_ops.h builder; two literals: the first becomes an expr.
template <typename F>
PrimExpr apply(F f, const Operand& a, const Operand& b) {
  return std::visit(
      [&](const auto& x, const auto& y) -> PrimExpr {
        using X = std::decay_t<decltype(x)>;
        using Y = std::decay_t<decltype(y)>;
        if constexpr (std::is_same_v<X, PrimExpr> || std::is_same_v<Y, PrimExpr>)
          return f(x, y);
        else
          return f(literal_expr(x), y);
      },
      a, b);
}

#define ANVIL_PY_BINARY(fn) [](const auto& x, const auto& y) { return ir::fn(x, y); }

enum class BinOp { kAdd, kSub, kMul, kTrueDiv, kFloorDiv, kFloorMod, kTruncDiv, kTruncMod, kMin, kMax,
                   kEQ, kNE, kLT, kLE, kGT, kGE };

bool is_int_operand(const Operand& o) {
  if (std::holds_alternative<int64_t>(o)) return true;
  if (const auto* e = std::get_if<PrimExpr>(&o)) return ir::is_integer(e->dtype());
  return false;
}

PrimExpr binary(BinOp op, const Operand& a, const Operand& b) {
  switch (op) {
    case BinOp::kAdd: return apply(ANVIL_PY_BINARY(add), a, b);
    case BinOp::kSub: return apply(ANVIL_PY_BINARY(sub), a, b);
    case BinOp::kMul: return apply(ANVIL_PY_BINARY(mul), a, b);
    case BinOp::kTrueDiv:
      if (is_int_operand(a) && is_int_operand(b))
        type_error("'/' of two integer expressions (", ir::to_string(operand_expr(a)), " / ",
                   ir::to_string(operand_expr(b)),
                   ") is ambiguous: use '//' (floordiv) or truncdiv, or cast to a float type first");
      return apply(ANVIL_PY_BINARY(div), a, b);
    case BinOp::kFloorDiv: return apply(ANVIL_PY_BINARY(floordiv), a, b);
    case BinOp::kFloorMod: return apply(ANVIL_PY_BINARY(floormod), a, b);
    case BinOp::kTruncDiv: return apply(ANVIL_PY_BINARY(div), a, b);
    case BinOp::kTruncMod: {
      PrimExpr x = operand_expr(a);
      PrimExpr q = apply(ANVIL_PY_BINARY(div), x, b);
      return apply(ANVIL_PY_BINARY(sub), x, apply(ANVIL_PY_BINARY(mul), q, b));
    }
    case BinOp::kMin: return apply(ANVIL_PY_BINARY(min), a, b);
    case BinOp::kMax: return apply(ANVIL_PY_BINARY(max), a, b);
    case BinOp::kEQ: return apply(ANVIL_PY_BINARY(eq), a, b);
    case BinOp::kNE: return apply(ANVIL_PY_BINARY(ne), a, b);
    case BinOp::kLT: return apply(ANVIL_PY_BINARY(lt), a, b);
    case BinOp::kLE: return apply(ANVIL_PY_BINARY(le), a, b);
    case BinOp::kGT: return apply(ANVIL_PY_BINARY(gt), a, b);
    case BinOp::kGE: return apply(ANVIL_PY_BINARY(ge), a, b);
  }
  throw_error(ErrorKind::kInternal, "binary: unknown operator");
}
#undef ANVIL_PY_BINARY

PrimExpr self_expr(const PrimExpr& e) { return e; }
PrimExpr self_expr(const te::IterVar& iv) { return iv.var(); }

// Comparisons with something that is no expression (None, a string) fall back to Python's
// default (identity), so `x == None` and `x in some_list` keep working.
template <typename C>
nb::object compare(BinOp op, const C& self, nb::handle other) {
  Operand b;
  if (!try_operand(other, &b)) return nb::borrow(Py_NotImplemented);
  return nb::cast(binary(op, self_expr(self), b));
}

// bool(e): constants by value; `a == b` / `a != b` by identity of the operands (as TVM does, so
// that lists of expressions can be searched); anything else is an error.
bool expr_bool(const PrimExpr& e) {
  if (auto v = ir::as_const_int(e)) return *v != 0;
  auto operands_same = [](const PrimExpr& a, const PrimExpr& b) {
    auto x = ir::as_const_int(a), y = ir::as_const_int(b);
    if (x && y) return *x == *y;
    return a.same_as(b);
  };
  if (const auto* n = e.as<ir::EQNode>()) return operands_same(n->a(), n->b());
  if (const auto* n = e.as<ir::NENode>()) return !operands_same(n->a(), n->b());
  value_error("cannot use the expression '", ir::to_string(e),
              "' as a Python bool (and/or/not/if): use te.all, te.any or te.if_then_else");
}

template <typename C>
void def_operators(nb::class_<C>& cls) {
  auto bin = [&cls](const char* name, BinOp op, bool reflected) {
    if (reflected)
      cls.def(name, [op](const C& self, nb::handle other) { return binary(op, to_operand(other), self_expr(self)); });
    else
      cls.def(name, [op](const C& self, nb::handle other) { return binary(op, self_expr(self), to_operand(other)); });
  };
  bin("__add__", BinOp::kAdd, false);
  bin("__radd__", BinOp::kAdd, true);
  bin("__sub__", BinOp::kSub, false);
  bin("__rsub__", BinOp::kSub, true);
  bin("__mul__", BinOp::kMul, false);
  bin("__rmul__", BinOp::kMul, true);
  bin("__truediv__", BinOp::kTrueDiv, false);
  bin("__rtruediv__", BinOp::kTrueDiv, true);
  bin("__floordiv__", BinOp::kFloorDiv, false);
  bin("__rfloordiv__", BinOp::kFloorDiv, true);
  bin("__mod__", BinOp::kFloorMod, false);
  bin("__rmod__", BinOp::kFloorMod, true);
  bin("__lt__", BinOp::kLT, false);
  bin("__le__", BinOp::kLE, false);
  bin("__gt__", BinOp::kGT, false);
  bin("__ge__", BinOp::kGE, false);
  cls.def("__eq__", [](const C& self, nb::handle o) { return compare(BinOp::kEQ, self, o); });
  cls.def("__ne__", [](const C& self, nb::handle o) { return compare(BinOp::kNE, self, o); });
  cls.def("__neg__", [](const C& self) { return -self_expr(self); });
  cls.def("__bool__", [](const C& self) { return expr_bool(self_expr(self)); });
  cls.def("__hash__", [](const C& self) { return reinterpret_cast<intptr_t>(self.get()); });
  cls.def("astype", [](const C& self, const std::string& dtype) { return ir::cast(to_dtype(dtype), self_expr(self)); },
          nb::arg("dtype"), "This expression converted to `dtype` (a no-op when it already has it).");
  cls.def("same_as", [](const C& self, nb::handle other) {
    Operand o;
    if (!try_operand(other, &o)) return false;
    const auto* e = std::get_if<PrimExpr>(&o);
    return e != nullptr && self_expr(self).same_as(*e);
  });
}

}  // namespace

ir::PrimExpr to_expr(nb::handle obj) { return operand_expr(to_operand(obj)); }

std::vector<ir::PrimExpr> to_shape(nb::handle obj) {
  std::vector<ir::PrimExpr> out;
  Operand single;
  if (try_operand(obj, &single)) {
    out.push_back(operand_expr(single));
    return out;
  }
  if (!PySequence_Check(obj.ptr()))
    type_error("a shape must be an int, an expression or a sequence of them, got '", Py_TYPE(obj.ptr())->tp_name, "'");
  for (nb::handle item : obj) {
    PrimExpr e = to_expr(item);
    if (!ir::is_integer(e.dtype()) || e.dtype().lanes() != 1)
      type_error("shape dimension '", ir::to_string(e), "' has dtype ", e.dtype().to_string(), ", not an integer");
    out.push_back(e);
  }
  return out;
}

DataType to_dtype(const std::string& text) { return DataType::parse(text); }

void def_itervar_operators(nb::class_<te::IterVar>& cls) { def_operators(cls); }

void init_expr(nb::module_& te) {
  nb::class_<PrimExpr> expr(te, "PrimExpr", "A scalar or vector expression of the tensor IR (immutable).");
  def_operators(expr);
  expr.def_prop_ro("dtype", [](const PrimExpr& e) { return e.dtype().to_string(); })
      .def_prop_ro("type_key", [](const PrimExpr& e) { return std::string(e->type_key()); })
      .def_prop_ro("value",
                   [](const PrimExpr& e) -> nb::object {
                     if (const auto* i = e.as<ir::IntImmNode>())
                       return e.dtype().is_bool() ? nb::cast(i->value() != 0) : nb::cast(i->value());
                     if (const auto* f = e.as<ir::FloatImmNode>()) return nb::cast(f->value());
                     throw nb::attribute_error("only constants (IntImm, FloatImm) have a value");
                   })
      .def("__int__",
           [](const PrimExpr& e) {
             auto v = ir::as_const_int(e);
             if (!v) type_error("int(): '", ir::to_string(e), "' is not an integer constant");
             return *v;
           })
      .def("__index__",
           [](const PrimExpr& e) {
             auto v = ir::as_const_int(e);
             if (!v) type_error("'", ir::to_string(e), "' is not an integer constant");
             return *v;
           })
      .def("__float__",
           [](const PrimExpr& e) {
             if (const auto* f = e.as<ir::FloatImmNode>()) return f->value();
             if (auto v = ir::as_const_int(e)) return static_cast<double>(*v);
             type_error("float(): '", ir::to_string(e), "' is not a constant");
           })
      .def("__str__", [](const PrimExpr& e) { return ir::to_string(e); })
      .def("__repr__", [](const PrimExpr& e) { return ir::to_string(e); });

  nb::class_<ir::Var, PrimExpr>(te, "Var", "A variable (loop index, symbolic shape dimension, ...).")
      .def(
          "__init__",
          [](ir::Var* self, std::string name, const std::string& dtype) {
            new (self) ir::Var(std::move(name), to_dtype(dtype));
          },
          nb::arg("name"), nb::arg("dtype") = "int32")
      .def_prop_ro("name", [](const ir::Var& v) { return v.name(); })
      .def_prop_ro("is_size_var", [](const ir::Var& v) { return v->is_size_var(); });

  te.def("var", [](std::string name, const std::string& dtype) { return ir::Var(std::move(name), to_dtype(dtype)); },
         nb::arg("name"), nb::arg("dtype"));
  te.def("size_var",
         [](std::string name, const std::string& dtype) { return ir::size_var(std::move(name), to_dtype(dtype)); },
         nb::arg("name"), nb::arg("dtype"));
  te.def(
      "const",
      [](nb::handle value, std::optional<std::string> dtype) {
        PrimExpr lit = to_expr(value);
        if (!dtype) return lit;
        DataType t = to_dtype(*dtype);
        if (const auto* f = lit.as<ir::FloatImmNode>()) {
          if (!t.is_float()) type_error("const: the float ", f->value(), " cannot have dtype ", *dtype);
          return ir::make_const(t, f->value());
        }
        if (auto v = ir::as_const_int(lit)) {
          if (ir::is_integer(t) || t.is_bool()) return ir::int_imm(*v, t);
          return ir::make_const(t, static_cast<double>(*v));
        }
        type_error("const: expected a number, got '", ir::to_string(lit), "'");
      },
      nb::arg("value"), nb::arg("dtype").none());
  te.def("to_expr", [](nb::handle x) { return to_expr(x); }, nb::arg("value"));
  te.def(
      "binary",
      [](const std::string& op, nb::handle a, nb::handle b) {
        static const std::pair<const char*, BinOp> kOps[] = {
            {"add", BinOp::kAdd},           {"sub", BinOp::kSub},           {"mul", BinOp::kMul},
            {"div", BinOp::kTrueDiv},       {"floordiv", BinOp::kFloorDiv}, {"floormod", BinOp::kFloorMod},
            {"truncdiv", BinOp::kTruncDiv}, {"truncmod", BinOp::kTruncMod}, {"min", BinOp::kMin},
            {"max", BinOp::kMax},           {"eq", BinOp::kEQ},             {"ne", BinOp::kNE},
            {"lt", BinOp::kLT},             {"le", BinOp::kLE},             {"gt", BinOp::kGT},
            {"ge", BinOp::kGE}};
        for (const auto& [name, code] : kOps)
          if (op == name) return binary(code, to_operand(a), to_operand(b));
        value_error("unknown binary operator '", op, "'");
      },
      nb::arg("op"), nb::arg("a"), nb::arg("b"));
  te.def(
      "call",
      [](const std::string& name, const std::vector<nb::handle>& args) {
        auto op = ir::parse_call_op(name);
        if (!op) value_error("unknown intrinsic '", name, "'");
        std::vector<PrimExpr> exprs;
        for (nb::handle a : args) exprs.push_back(to_expr(a));
        return ir::call(*op, std::move(exprs));
      },
      nb::arg("name"), nb::arg("args"));
  te.def(
      "select", [](nb::handle c, nb::handle t, nb::handle f) { return ir::select(to_expr(c), to_expr(t), to_expr(f)); },
      nb::arg("cond"), nb::arg("true_value"), nb::arg("false_value"));
  te.def("cast", [](const std::string& dtype, nb::handle x) { return ir::cast(to_dtype(dtype), to_expr(x)); },
         nb::arg("dtype"), nb::arg("value"));
  te.def("logical_and", [](nb::handle a, nb::handle b) { return ir::logical_and(to_expr(a), to_expr(b)); });
  te.def("logical_or", [](nb::handle a, nb::handle b) { return ir::logical_or(to_expr(a), to_expr(b)); });
  te.def("logical_not", [](nb::handle a) { return ir::logical_not(to_expr(a)); });
}

}  // namespace anvil::python
