// Promoting expression builders (rules in expr_ops.h).
#include "anvil/ir/expr_ops.h"

#include <utility>

#include "anvil/base/error.h"

namespace anvil::ir {
namespace {

bool is_imm(const PrimExpr& e) { return e.as<IntImmNode>() != nullptr || e.as<FloatImmNode>() != nullptr; }

// An immediate converted to element type elem (rule 2), or a TypeError/ValueError.
PrimExpr convert_imm(const PrimExpr& imm, DataType elem, std::string_view op, const PrimExpr& other) {
  if (auto* i = imm.as<IntImmNode>()) {
    if (!imm.dtype().is_bool()) {
      if (is_integer(elem)) {
        if (!int_fits(elem, i->value()))
          value_error(op, ": constant ", i->value(), " does not fit the other operand's dtype ",
                      dtype_name(other.dtype()));
        return IntImmNode::make(elem, i->value());
      }
      if (elem.is_float()) return FloatImmNode::make(elem, static_cast<double>(i->value()));
    }
  } else if (auto* f = imm.as<FloatImmNode>()) {
    if (elem.is_float()) return FloatImmNode::make(elem, f->value());
    type_error(op, ": float constant ", f->value(), " with an operand of dtype ", dtype_name(other.dtype()),
               "; cast explicitly");
  }
  type_error(op, ": cannot combine a constant of dtype ", dtype_name(imm.dtype()), " with dtype ",
             dtype_name(other.dtype()));
}

// e converted to element type elem keeping its lanes: immediates are rebuilt, others cast.
PrimExpr convert(const PrimExpr& e, DataType elem, std::string_view op, const PrimExpr& other) {
  if (is_imm(e)) return convert_imm(e, elem, op, other);
  return CastNode::make(with_lanes(elem, e.dtype().lanes()), e);
}

[[noreturn]] void mismatch(std::string_view op, const PrimExpr& a, const PrimExpr& b) {
  type_error(op, ": incompatible operand dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()));
}

std::pair<PrimExpr, PrimExpr> match_types(PrimExpr a, PrimExpr b, std::string_view op) {
  if (!a.defined() || !b.defined()) value_error(op, ": operand is undefined");
  if (a.dtype() == b.dtype()) return {std::move(a), std::move(b)};
  DataType ta = element_of(a.dtype()), tb = element_of(b.dtype());
  if (ta != tb) {
    bool ia = is_imm(a), ib = is_imm(b);
    if (ia && !ib) {
      a = convert_imm(a, tb, op, b);
    } else if (ib && !ia) {
      b = convert_imm(b, ta, op, a);
    } else if ((ta.is_int() && tb.is_int()) || (ta.is_uint() && tb.is_uint()) || (ta.is_float() && tb.is_float())) {
      if (ta.bits() < tb.bits())
        a = convert(a, tb, op, b);
      else
        b = convert(b, ta, op, a);
    } else if (is_integer(ta) && tb.is_float()) {
      a = convert(a, tb, op, b);
    } else if (ta.is_float() && is_integer(tb)) {
      b = convert(b, ta, op, a);
    } else {
      mismatch(op, a, b);
    }
  }
  int la = a.dtype().lanes(), lb = b.dtype().lanes();
  if (la != lb) {
    if (la == 1)
      a = BroadcastNode::make(a, lb);
    else if (lb == 1)
      b = BroadcastNode::make(b, la);
    else
      mismatch(op, a, b);
  }
  if (a.dtype() != b.dtype()) mismatch(op, a, b);
  return {std::move(a), std::move(b)};
}

template <ExprKind K>
PrimExpr build(const PrimExpr& a, const PrimExpr& b, std::string_view op) {
  auto [x, y] = match_types(a, b, op);
  return BinaryOpNode<K>::make(std::move(x), std::move(y));
}

PrimExpr lit(int64_t v) { return int_fits(DataType::int32(), v) ? int_imm(v) : int_imm(v, DataType::int64()); }
PrimExpr lit(double v) { return float_imm(v); }

}  // namespace

#define ANVIL_IR_DEFINE_BINARY(fn, Kind, text)                                                      \
  PrimExpr fn(const PrimExpr& a, const PrimExpr& b) { return build<ExprKind::Kind>(a, b, text); }   \
  PrimExpr fn(const PrimExpr& a, int b) { return build<ExprKind::Kind>(a, lit(int64_t{b}), text); } \
  PrimExpr fn(int a, const PrimExpr& b) { return build<ExprKind::Kind>(lit(int64_t{a}), b, text); } \
  PrimExpr fn(const PrimExpr& a, int64_t b) { return build<ExprKind::Kind>(a, lit(b), text); }      \
  PrimExpr fn(int64_t a, const PrimExpr& b) { return build<ExprKind::Kind>(lit(a), b, text); }      \
  PrimExpr fn(const PrimExpr& a, double b) { return build<ExprKind::Kind>(a, lit(b), text); }       \
  PrimExpr fn(double a, const PrimExpr& b) { return build<ExprKind::Kind>(lit(a), b, text); }

ANVIL_IR_DEFINE_BINARY(operator+, kAdd, "+")
ANVIL_IR_DEFINE_BINARY(operator-, kSub, "-")
ANVIL_IR_DEFINE_BINARY(operator*, kMul, "*")
ANVIL_IR_DEFINE_BINARY(operator/, kDiv, "/")
ANVIL_IR_DEFINE_BINARY(operator<, kLT, "<")
ANVIL_IR_DEFINE_BINARY(operator<=, kLE, "<=")
ANVIL_IR_DEFINE_BINARY(operator>, kGT, ">")
ANVIL_IR_DEFINE_BINARY(operator>=, kGE, ">=")
ANVIL_IR_DEFINE_BINARY(add, kAdd, "add")
ANVIL_IR_DEFINE_BINARY(sub, kSub, "sub")
ANVIL_IR_DEFINE_BINARY(mul, kMul, "mul")
ANVIL_IR_DEFINE_BINARY(div, kDiv, "div")
ANVIL_IR_DEFINE_BINARY(floordiv, kFloorDiv, "floordiv")
ANVIL_IR_DEFINE_BINARY(floormod, kFloorMod, "floormod")
ANVIL_IR_DEFINE_BINARY(min, kMin, "min")
ANVIL_IR_DEFINE_BINARY(max, kMax, "max")
ANVIL_IR_DEFINE_BINARY(eq, kEQ, "eq")
ANVIL_IR_DEFINE_BINARY(ne, kNE, "ne")
ANVIL_IR_DEFINE_BINARY(lt, kLT, "lt")
ANVIL_IR_DEFINE_BINARY(le, kLE, "le")
ANVIL_IR_DEFINE_BINARY(gt, kGT, "gt")
ANVIL_IR_DEFINE_BINARY(ge, kGE, "ge")
#undef ANVIL_IR_DEFINE_BINARY

PrimExpr operator-(const PrimExpr& a) {
  if (!a.defined()) value_error("negate: operand is undefined");
  if (auto* i = a.as<IntImmNode>(); i && !a.dtype().is_bool()) {
    if (a.dtype().is_int() && int_fits(a.dtype(), -i->value())) return IntImmNode::make(a.dtype(), -i->value());
  }
  if (auto* f = a.as<FloatImmNode>()) return FloatImmNode::make(a.dtype(), -f->value());
  if (!is_numeric(a.dtype())) type_error("negate: operand must be numeric, got ", dtype_name(a.dtype()));
  return SubNode::make(make_zero(a.dtype()), a);
}

PrimExpr logical_and(const PrimExpr& a, const PrimExpr& b) { return build<ExprKind::kAnd>(a, b, "and"); }
PrimExpr logical_or(const PrimExpr& a, const PrimExpr& b) { return build<ExprKind::kOr>(a, b, "or"); }
PrimExpr logical_not(const PrimExpr& a) { return NotNode::make(a); }
PrimExpr operator&&(const PrimExpr& a, const PrimExpr& b) { return logical_and(a, b); }
PrimExpr operator||(const PrimExpr& a, const PrimExpr& b) { return logical_or(a, b); }
PrimExpr operator!(const PrimExpr& a) { return logical_not(a); }

PrimExpr select(const PrimExpr& cond, const PrimExpr& true_value, const PrimExpr& false_value) {
  auto [t, f] = match_types(true_value, false_value, "select");
  if (cond.defined() && cond.dtype().lanes() > 1 && t.dtype().lanes() == 1) {
    t = BroadcastNode::make(t, cond.dtype().lanes());
    f = BroadcastNode::make(f, cond.dtype().lanes());
  }
  return SelectNode::make(cond, std::move(t), std::move(f));
}

PrimExpr cast(DataType dtype, const PrimExpr& value) {
  if (!value.defined()) value_error("cast: operand is undefined");
  if (value.dtype() == dtype) return value;
  if (value.dtype().lanes() == 1 && dtype.lanes() > 1)
    return BroadcastNode::make(cast(element_of(dtype), value), dtype.lanes());
  return CastNode::make(dtype, value);
}

PrimExpr ramp(const PrimExpr& base, const PrimExpr& stride, int lanes) {
  auto [b, s] = match_types(base, stride, "ramp");
  return RampNode::make(std::move(b), std::move(s), lanes);
}

PrimExpr broadcast(const PrimExpr& value, int lanes) {
  if (lanes == 1 && value.defined() && value.dtype().lanes() == 1) return value;
  return BroadcastNode::make(value, lanes);
}

PrimExpr let(const Var& var, const PrimExpr& value, const PrimExpr& body) {
  PrimExpr v = value;
  if (v.defined() && var.defined() && v.dtype() != var.dtype() && is_imm(v))
    v = convert_imm(v, var.dtype(), "let", var);
  return LetNode::make(var, std::move(v), body);
}

PrimExpr call(CallOp op, std::vector<PrimExpr> args) {
  std::string_view name = call_op_name(op);
  if (!args.empty()) {
    PrimExpr proto = args[0];
    for (size_t i = 1; i < args.size(); ++i) proto = match_types(proto, args[i], name).first;
    for (auto& arg : args) arg = match_types(arg, proto, name).first;
  }
  return CallNode::make(op, std::move(args));
}

PrimExpr exp(const PrimExpr& x) { return call(CallOp::k_exp, {x}); }
PrimExpr log(const PrimExpr& x) { return call(CallOp::k_log, {x}); }
PrimExpr sqrt(const PrimExpr& x) { return call(CallOp::k_sqrt, {x}); }
PrimExpr rsqrt(const PrimExpr& x) { return call(CallOp::k_rsqrt, {x}); }
PrimExpr tanh(const PrimExpr& x) { return call(CallOp::k_tanh, {x}); }
PrimExpr erf(const PrimExpr& x) { return call(CallOp::k_erf, {x}); }
PrimExpr sigmoid(const PrimExpr& x) { return call(CallOp::k_sigmoid, {x}); }
PrimExpr pow(const PrimExpr& x, const PrimExpr& y) { return call(CallOp::k_pow, {x, y}); }
PrimExpr floor(const PrimExpr& x) { return call(CallOp::k_floor, {x}); }
PrimExpr ceil(const PrimExpr& x) { return call(CallOp::k_ceil, {x}); }
PrimExpr round(const PrimExpr& x) { return call(CallOp::k_round, {x}); }
PrimExpr abs(const PrimExpr& x) { return call(CallOp::k_abs, {x}); }
PrimExpr fma(const PrimExpr& a, const PrimExpr& b, const PrimExpr& c) { return call(CallOp::k_fma, {a, b, c}); }
PrimExpr sin(const PrimExpr& x) { return call(CallOp::k_sin, {x}); }
PrimExpr cos(const PrimExpr& x) { return call(CallOp::k_cos, {x}); }
PrimExpr tan(const PrimExpr& x) { return call(CallOp::k_tan, {x}); }
PrimExpr asin(const PrimExpr& x) { return call(CallOp::k_asin, {x}); }
PrimExpr acos(const PrimExpr& x) { return call(CallOp::k_acos, {x}); }
PrimExpr atan(const PrimExpr& x) { return call(CallOp::k_atan, {x}); }
PrimExpr sinh(const PrimExpr& x) { return call(CallOp::k_sinh, {x}); }
PrimExpr cosh(const PrimExpr& x) { return call(CallOp::k_cosh, {x}); }
PrimExpr asinh(const PrimExpr& x) { return call(CallOp::k_asinh, {x}); }
PrimExpr acosh(const PrimExpr& x) { return call(CallOp::k_acosh, {x}); }
PrimExpr atanh(const PrimExpr& x) { return call(CallOp::k_atanh, {x}); }
PrimExpr log2(const PrimExpr& x) { return call(CallOp::k_log2, {x}); }
PrimExpr log10(const PrimExpr& x) { return call(CallOp::k_log10, {x}); }
PrimExpr trunc(const PrimExpr& x) { return call(CallOp::k_trunc, {x}); }
PrimExpr copysign(const PrimExpr& x, const PrimExpr& y) { return call(CallOp::k_copysign, {x, y}); }
PrimExpr isnan(const PrimExpr& x) { return call(CallOp::k_isnan, {x}); }
PrimExpr isinf(const PrimExpr& x) { return call(CallOp::k_isinf, {x}); }
PrimExpr isfinite(const PrimExpr& x) { return call(CallOp::k_isfinite, {x}); }
PrimExpr bitwise_and(const PrimExpr& a, const PrimExpr& b) { return call(CallOp::k_bitwise_and, {a, b}); }
PrimExpr bitwise_or(const PrimExpr& a, const PrimExpr& b) { return call(CallOp::k_bitwise_or, {a, b}); }
PrimExpr bitwise_xor(const PrimExpr& a, const PrimExpr& b) { return call(CallOp::k_bitwise_xor, {a, b}); }
PrimExpr bitwise_not(const PrimExpr& a) { return call(CallOp::k_bitwise_not, {a}); }
PrimExpr shift_left(const PrimExpr& x, const PrimExpr& k) { return call(CallOp::k_shift_left, {x, k}); }
PrimExpr shift_right(const PrimExpr& x, const PrimExpr& k) { return call(CallOp::k_shift_right, {x, k}); }

}  // namespace anvil::ir
