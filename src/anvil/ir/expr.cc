// Expression nodes: kind names, intrinsic table and the checking factories.
#include "anvil/ir/expr.h"

#include <cmath>

#include "anvil/base/error.h"

namespace anvil::ir {
namespace {

std::string dt(const PrimExpr& e) { return dtype_name(e.dtype()); }

void check_defined(const PrimExpr& e, std::string_view op, std::string_view operand) {
  if (!e.defined()) value_error(op, ": operand '", operand, "' is undefined");
}

void check_scalar_int(const PrimExpr& e, std::string_view op, std::string_view operand) {
  check_defined(e, op, operand);
  if (!is_integer(e.dtype()) || e.dtype().lanes() != 1)
    type_error(op, ": ", operand, " must be a scalar integer, got ", dt(e));
}

}  // namespace

std::string_view expr_kind_name(ExprKind kind) {
  switch (kind) {
#define ANVIL_EXPR_KIND(Name) \
  case ExprKind::k##Name:     \
    return #Name;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
  }
  return "Unknown";
}

std::string_view PrimExprNode::type_key() const {
  switch (kind_) {
#define ANVIL_EXPR_KIND(Name) \
  case ExprKind::k##Name:     \
    return "ir." #Name;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
  }
  return "ir.Unknown";
}

namespace {
struct IntrinsicInfo {
  std::string_view name;
  int arity;
  IntrinsicKind kind;
};
constexpr IntrinsicInfo kIntrinsics[] = {
#define ANVIL_INTRINSIC(name, arity, kind) {#name, arity, IntrinsicKind::kind},
#include "anvil/ir/intrinsics.def"
#undef ANVIL_INTRINSIC
};
}  // namespace

std::string_view call_op_name(CallOp op) { return kIntrinsics[static_cast<int>(op)].name; }
int call_op_arity(CallOp op) { return kIntrinsics[static_cast<int>(op)].arity; }
IntrinsicKind call_op_kind(CallOp op) { return kIntrinsics[static_cast<int>(op)].kind; }
std::optional<CallOp> parse_call_op(std::string_view name) {
  for (size_t i = 0; i < std::size(kIntrinsics); ++i)
    if (kIntrinsics[i].name == name) return static_cast<CallOp>(i);
  return std::nullopt;
}

PrimExpr::PrimExpr(int value) : PrimExpr(IntImmNode::make(DataType::int32(), value)) {}
PrimExpr::PrimExpr(double value) : PrimExpr(FloatImmNode::make(DataType::float32(), value)) {}

// ---- immediates ---------------------------------------------------------------------------

PrimExpr IntImmNode::make(DataType dtype, int64_t value) {
  if (dtype.lanes() != 1 || !(is_integer(dtype) || dtype.is_bool()))
    type_error("IntImm: dtype must be a scalar int, uint or bool, got ", dtype_name(dtype));
  if (!int_fits(dtype, value)) value_error("IntImm: value ", value, " does not fit ", dtype_name(dtype));
  return PrimExpr(new IntImmNode(dtype, value));
}

PrimExpr FloatImmNode::make(DataType dtype, double value) {
  if (dtype.lanes() != 1 || !dtype.is_float())
    type_error("FloatImm: dtype must be a scalar float, got ", dtype_name(dtype));
  return PrimExpr(new FloatImmNode(dtype, value));
}

PrimExpr StringImmNode::make(std::string value) { return PrimExpr(new StringImmNode(std::move(value))); }

PrimExpr int_imm(int64_t value, DataType dtype) { return IntImmNode::make(dtype, value); }
PrimExpr float_imm(double value, DataType dtype) { return FloatImmNode::make(dtype, value); }
PrimExpr bool_imm(bool value) { return IntImmNode::make(bool_type(), value ? 1 : 0); }
PrimExpr string_imm(std::string value) { return StringImmNode::make(std::move(value)); }

PrimExpr make_const(DataType dtype, double value) {
  DataType elem = element_of(dtype);
  PrimExpr scalar;
  if (elem.is_float()) {
    scalar = FloatImmNode::make(elem, value);
  } else if (is_integer(elem) || elem.is_bool()) {
    if (value != std::trunc(value) || std::abs(value) > 9.2e18)
      value_error("make_const: ", value, " is not an integral value for ", dtype_name(dtype));
    scalar = IntImmNode::make(elem, static_cast<int64_t>(value));
  } else {
    type_error("make_const: no constants of dtype ", dtype_name(dtype));
  }
  return dtype.lanes() == 1 ? scalar : BroadcastNode::make(scalar, dtype.lanes());
}

PrimExpr make_zero(DataType dtype) { return make_const(dtype, 0); }

std::optional<int64_t> as_const_int(const PrimExpr& e) {
  if (auto* imm = e.as<IntImmNode>()) return imm->value();
  if (auto* b = e.as<BroadcastNode>()) return as_const_int(b->value());
  return std::nullopt;
}

// ---- variables ----------------------------------------------------------------------------

Var::Var(std::string name, DataType dtype) {
  if (name.empty()) value_error("Var: the name must be non-empty");
  if (is_void(dtype)) type_error("Var '", name, "': dtype must not be void");
  node_ = Ref<PrimExprNode>(new VarNode(std::move(name), dtype, false));
}

Var size_var(std::string name, DataType dtype) {
  if (name.empty()) value_error("size_var: the name must be non-empty");
  if (!is_integer(dtype) || dtype.lanes() != 1)
    type_error("size_var '", name, "': dtype must be a scalar integer, got ", dtype_name(dtype));
  return Var(new VarNode(std::move(name), dtype, true));
}

// ---- binary operators ---------------------------------------------------------------------

bool is_binary_kind(ExprKind kind) {
  switch (kind) {
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) case ExprKind::k##Name:
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    return true;
    default:
      return false;
  }
}

template <ExprKind K>
PrimExpr BinaryOpNode<K>::make(PrimExpr a, PrimExpr b) {
  std::string_view op = expr_kind_name(K);
  check_defined(a, op, "a");
  check_defined(b, op, "b");
  if (a.dtype() != b.dtype()) type_error(op, ": operand dtypes differ (", dt(a), " vs ", dt(b), ")");
  DataType t = a.dtype();
  DataType result = t;
  if constexpr (K == ExprKind::kAnd || K == ExprKind::kOr) {
    if (!t.is_bool()) type_error(op, ": operands must be bool, got ", dt(a));
  } else if constexpr (K == ExprKind::kEQ || K == ExprKind::kNE || K == ExprKind::kLT || K == ExprKind::kLE ||
                       K == ExprKind::kGT || K == ExprKind::kGE) {
    if (is_handle(t)) type_error(op, ": cannot compare values of dtype ", dt(a));
    result = bool_type(t.lanes());
  } else {
    if (!is_numeric(t)) type_error(op, ": operands must be numeric, got ", dt(a));
  }
  return PrimExpr(new BinaryOpNode<K>(result, std::move(a), std::move(b)));
}

#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) template class BinaryOpNode<ExprKind::k##Name>;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND

// ---- other operators ----------------------------------------------------------------------

PrimExpr NotNode::make(PrimExpr a) {
  check_defined(a, "Not", "a");
  if (!a.dtype().is_bool()) type_error("Not: operand must be bool, got ", dt(a));
  DataType t = a.dtype();
  return PrimExpr(new NotNode(t, std::move(a)));
}

PrimExpr SelectNode::make(PrimExpr cond, PrimExpr true_value, PrimExpr false_value) {
  check_defined(cond, "Select", "cond");
  check_defined(true_value, "Select", "true_value");
  check_defined(false_value, "Select", "false_value");
  if (true_value.dtype() != false_value.dtype())
    type_error("Select: value dtypes differ (", dt(true_value), " vs ", dt(false_value), ")");
  DataType t = true_value.dtype();
  if (!cond.dtype().is_bool() || (cond.dtype().lanes() != 1 && cond.dtype().lanes() != t.lanes()))
    type_error("Select: cond must be bool or boolx", t.lanes(), ", got ", dt(cond));
  return PrimExpr(new SelectNode(t, std::move(cond), std::move(true_value), std::move(false_value)));
}

PrimExpr CastNode::make(DataType dtype, PrimExpr value) {
  check_defined(value, "Cast", "value");
  DataType from = value.dtype();
  bool ok_from = is_numeric(from) || from.is_bool();
  bool ok_to = is_numeric(dtype) || dtype.is_bool();
  if (!ok_from || !ok_to) type_error("Cast: cannot cast ", dt(value), " to ", dtype_name(dtype));
  if (from.lanes() != dtype.lanes())
    type_error("Cast: lane counts differ (", dt(value), " to ", dtype_name(dtype), "); broadcast first");
  return PrimExpr(new CastNode(dtype, std::move(value)));
}

PrimExpr RampNode::make(PrimExpr base, PrimExpr stride, int lanes) {
  check_scalar_int(base, "Ramp", "base");
  check_scalar_int(stride, "Ramp", "stride");
  if (base.dtype() != stride.dtype())
    type_error("Ramp: base and stride dtypes differ (", dt(base), " vs ", dt(stride), ")");
  if (lanes < 2 || lanes > 65535) value_error("Ramp: lanes must be in [2, 65535], got ", lanes);
  DataType t = with_lanes(base.dtype(), lanes);
  return PrimExpr(new RampNode(t, std::move(base), std::move(stride)));
}

PrimExpr BroadcastNode::make(PrimExpr value, int lanes) {
  check_defined(value, "Broadcast", "value");
  if (value.dtype().lanes() != 1) type_error("Broadcast: value must be scalar, got ", dt(value));
  if (is_handle(value.dtype())) type_error("Broadcast: cannot broadcast a handle");
  if (lanes < 2 || lanes > 65535) value_error("Broadcast: lanes must be in [2, 65535], got ", lanes);
  DataType t = with_lanes(value.dtype(), lanes);
  return PrimExpr(new BroadcastNode(t, std::move(value)));
}

PrimExpr LetNode::make(Var var, PrimExpr value, PrimExpr body) {
  if (!var.defined()) value_error("Let: var is undefined");
  check_defined(value, "Let", "value");
  check_defined(body, "Let", "body");
  if (var.dtype() != value.dtype())
    type_error("Let: var '", var.name(), "' has dtype ", dt(var), " but the value has ", dt(value));
  return PrimExpr(new LetNode(std::move(var), std::move(value), std::move(body)));
}

PrimExpr CallNode::make(CallOp op, std::vector<PrimExpr> args) {
  std::string_view name = call_op_name(op);
  if (static_cast<int>(args.size()) != call_op_arity(op))
    value_error("Call ", name, ": expected ", call_op_arity(op), " arguments, got ", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    check_defined(args[i], name, "argument");
    if (args[i].dtype() != args[0].dtype())
      type_error("Call ", name, ": argument dtypes differ (", dt(args[0]), " vs ", dt(args[i]), ")");
  }
  DataType t = args[0].dtype();
  IntrinsicKind kind = call_op_kind(op);
  bool ok = kind == IntrinsicKind::kNumeric   ? is_numeric(t)
            : kind == IntrinsicKind::kInteger ? is_integer(t)
                                              : t.is_float();
  if (!ok) {
    const char* want = kind == IntrinsicKind::kNumeric   ? "int, uint or float"
                       : kind == IntrinsicKind::kInteger ? "int or uint"
                                                         : "float";
    type_error("Call ", name, ": arguments must be ", want, ", got ", dtype_name(t));
  }
  DataType result = kind == IntrinsicKind::kFloatTest ? bool_type(t.lanes()) : t;
  return PrimExpr(new CallNode(result, op, std::move(args)));
}

}  // namespace anvil::ir
