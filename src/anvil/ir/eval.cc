// Reference expression evaluator (semantics in eval.h).
#include "anvil/ir/eval.h"

#include <cmath>
#include <limits>

#include "anvil/base/error.h"
#include "anvil/base/int_math.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/minifloat.h"
#include "anvil/ir/printer.h"

namespace anvil::ir {
namespace {

EvalValue make_value(DataType t) {
  EvalValue v;
  v.dtype = t;
  v.lanes.resize(static_cast<size_t>(t.lanes()));
  return v;
}

// Lane l of v, broadcasting scalars.
const EvalScalar& lane(const EvalValue& v, int l) { return v.lanes[v.lanes.size() == 1 ? 0 : static_cast<size_t>(l)]; }

template <ExprKind K>
EvalScalar int_op(int64_t a, int64_t b, DataType t, const PrimExprNode* node) {
  EvalScalar r;
  bool is_unsigned = t.is_uint();
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto check_div = [&] {
    if (b == 0) value_error("evaluate ", to_string(PrimExpr(node)), ": division by zero");
  };
  if constexpr (K == ExprKind::kAdd) r.i = static_cast<int64_t>(ua + ub);
  if constexpr (K == ExprKind::kSub) r.i = static_cast<int64_t>(ua - ub);
  if constexpr (K == ExprKind::kMul) r.i = static_cast<int64_t>(ua * ub);
  if constexpr (K == ExprKind::kDiv || K == ExprKind::kFloorDiv || K == ExprKind::kFloorMod) {
    check_div();
    if (is_unsigned) {
      r.i = static_cast<int64_t>(K == ExprKind::kFloorMod ? ua % ub : ua / ub);
    } else if (a == std::numeric_limits<int64_t>::min() && b == -1) {
      r.i = K == ExprKind::kFloorMod ? 0 : a;  // wraps
    } else if constexpr (K == ExprKind::kDiv) {
      r.i = a / b;
    } else if constexpr (K == ExprKind::kFloorDiv) {
      r.i = floor_div(a, b);
    } else {
      r.i = floor_mod(a, b);
    }
  }
  if constexpr (K == ExprKind::kMin) r.i = is_unsigned ? static_cast<int64_t>(std::min(ua, ub)) : std::min(a, b);
  if constexpr (K == ExprKind::kMax) r.i = is_unsigned ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
  if constexpr (K == ExprKind::kEQ) r.i = a == b;
  if constexpr (K == ExprKind::kNE) r.i = a != b;
  if constexpr (K == ExprKind::kLT) r.i = is_unsigned ? ua < ub : a < b;
  if constexpr (K == ExprKind::kLE) r.i = is_unsigned ? ua <= ub : a <= b;
  if constexpr (K == ExprKind::kGT) r.i = is_unsigned ? ua > ub : a > b;
  if constexpr (K == ExprKind::kGE) r.i = is_unsigned ? ua >= ub : a >= b;
  if constexpr (K == ExprKind::kAnd) r.i = (a != 0) && (b != 0);
  if constexpr (K == ExprKind::kOr) r.i = (a != 0) || (b != 0);
  return r;
}

template <ExprKind K>
EvalScalar float_op(double a, double b) {
  EvalScalar r;
  if constexpr (K == ExprKind::kAdd) r.f = a + b;
  if constexpr (K == ExprKind::kSub) r.f = a - b;
  if constexpr (K == ExprKind::kMul) r.f = a * b;
  if constexpr (K == ExprKind::kDiv) r.f = a / b;
  if constexpr (K == ExprKind::kFloorDiv) r.f = std::floor(a / b);
  if constexpr (K == ExprKind::kFloorMod) r.f = a - std::floor(a / b) * b;
  if constexpr (K == ExprKind::kMin) r.f = std::fmin(a, b);
  if constexpr (K == ExprKind::kMax) r.f = std::fmax(a, b);
  if constexpr (K == ExprKind::kEQ) r.i = a == b;
  if constexpr (K == ExprKind::kNE) r.i = a != b;
  if constexpr (K == ExprKind::kLT) r.i = a < b;
  if constexpr (K == ExprKind::kLE) r.i = a <= b;
  if constexpr (K == ExprKind::kGT) r.i = a > b;
  if constexpr (K == ExprKind::kGE) r.i = a >= b;
  return r;
}

}  // namespace

int64_t wrap_int(int64_t v, DataType t) {
  if (t.is_bool()) return v != 0;
  int bits = t.bits();
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (t.is_int() && (u >> (bits - 1)) & 1) u |= ~mask;  // sign-extend
  return static_cast<int64_t>(u);
}

double round_float(double v, DataType t) {
  if (!t.is_float()) return v;
  if (t.code() == DataType::kBFloat) return t.bits() == 16 ? round_to_bfloat16(v) : v;
  if (std::optional<MinifloatFormat> f = minifloat_format(element_of(t))) return f->round(v);  // float8, float4
  switch (t.bits()) {
    case 16: return round_to_half(v);
    case 32: return static_cast<double>(static_cast<float>(v));
    default: return v;
  }
}

double intrinsic_float(CallOp op, const std::vector<double>& x) {
  switch (op) {
    case CallOp::k_exp: return std::exp(x[0]);
    case CallOp::k_log: return std::log(x[0]);
    case CallOp::k_sqrt: return std::sqrt(x[0]);
    case CallOp::k_rsqrt: return 1.0 / std::sqrt(x[0]);
    case CallOp::k_tanh: return std::tanh(x[0]);
    case CallOp::k_erf: return std::erf(x[0]);
    case CallOp::k_sigmoid: return 1.0 / (1.0 + std::exp(-x[0]));
    case CallOp::k_pow: return std::pow(x[0], x[1]);
    case CallOp::k_floor: return std::floor(x[0]);
    case CallOp::k_ceil: return std::ceil(x[0]);
    case CallOp::k_round: return std::nearbyint(x[0]);  // default rounding mode: half to even
    case CallOp::k_abs: return std::fabs(x[0]);
    case CallOp::k_fma: return std::fma(x[0], x[1], x[2]);
    case CallOp::k_sin: return std::sin(x[0]);
    case CallOp::k_cos: return std::cos(x[0]);
    case CallOp::k_tan: return std::tan(x[0]);
    case CallOp::k_asin: return std::asin(x[0]);
    case CallOp::k_acos: return std::acos(x[0]);
    case CallOp::k_atan: return std::atan(x[0]);
    case CallOp::k_sinh: return std::sinh(x[0]);
    case CallOp::k_cosh: return std::cosh(x[0]);
    case CallOp::k_asinh: return std::asinh(x[0]);
    case CallOp::k_acosh: return std::acosh(x[0]);
    case CallOp::k_atanh: return std::atanh(x[0]);
    case CallOp::k_log2: return std::log2(x[0]);
    case CallOp::k_log10: return std::log10(x[0]);
    case CallOp::k_trunc: return std::trunc(x[0]);
    case CallOp::k_copysign: return std::copysign(x[0], x[1]);
    default: break;
  }
  ANVIL_ICHECK(false, "intrinsic_float: ", call_op_name(op), " has no float result");
  return 0;
}

bool intrinsic_test(CallOp op, double x) {
  switch (op) {
    case CallOp::k_isnan: return std::isnan(x);
    case CallOp::k_isinf: return std::isinf(x);
    case CallOp::k_isfinite: return std::isfinite(x);
    default: break;
  }
  ANVIL_ICHECK(false, "intrinsic_test: ", call_op_name(op), " is not a classification");
  return false;
}

int64_t intrinsic_int(CallOp op, const std::vector<int64_t>& x, DataType t) {
  auto u = [&](size_t k) { return static_cast<uint64_t>(x[k]); };
  auto bits = static_cast<uint64_t>(t.bits());
  switch (op) {
    case CallOp::k_abs: return wrap_int(x[0] < 0 ? static_cast<int64_t>(0 - u(0)) : x[0], t);
    case CallOp::k_bitwise_and: return wrap_int(x[0] & x[1], t);
    case CallOp::k_bitwise_or: return wrap_int(x[0] | x[1], t);
    case CallOp::k_bitwise_xor: return wrap_int(x[0] ^ x[1], t);
    case CallOp::k_bitwise_not: return wrap_int(~x[0], t);
    case CallOp::k_shift_left: return u(1) >= bits ? 0 : wrap_int(static_cast<int64_t>(u(0) << u(1)), t);
    case CallOp::k_shift_right:
      // int lanes are held sign-extended, uint lanes zero-extended: >> on each is the right shift.
      if (t.is_int()) return u(1) >= bits ? (x[0] < 0 ? -1 : 0) : x[0] >> u(1);
      return u(1) >= bits ? 0 : static_cast<int64_t>(u(0) >> u(1));
    default: break;
  }
  ANVIL_ICHECK(false, "intrinsic_int: ", call_op_name(op), " has no integer form");
  return 0;
}

EvalValue EvalValue::of_int(int64_t v, DataType t) {
  EvalValue r = make_value(t);
  r.lanes[0].i = wrap_int(v, t);
  return r;
}

EvalValue EvalValue::of_float(double v, DataType t) {
  EvalValue r = make_value(t);
  r.lanes[0].f = round_float(v, t);
  return r;
}

double EvalValue::as_float(int l) const {
  const EvalScalar& s = lanes.at(static_cast<size_t>(l));
  if (dtype.is_float()) return s.f;
  if (dtype.is_uint()) return static_cast<double>(static_cast<uint64_t>(s.i));
  return static_cast<double>(s.i);
}

void Evaluator::bind(const Var& v, EvalValue value) {
  if (value.dtype != v.dtype()) {
    DataType t = v.dtype();
    if (value.lanes.size() == 1 && t.lanes() == 1 && (is_integer(t) || t.is_bool()) && !value.dtype.is_float()) {
      value = EvalValue::of_int(value.lanes[0].i, t);
    } else if (value.lanes.size() == 1 && t.lanes() == 1 && t.is_float()) {
      value = EvalValue::of_float(value.as_float(), t);
    } else {
      type_error("evaluate: var '", v.name(), "' of dtype ", dtype_name(t), " bound to a ", dtype_name(value.dtype),
                 " value");
    }
  }
  vars_[v.get()] = std::move(value);
}

void Evaluator::unbind(const Var& v) { vars_.erase(v.get()); }

const EvalValue* Evaluator::lookup(const VarNode* v) const {
  auto it = vars_.find(v);
  return it == vars_.end() ? nullptr : &it->second;
}

EvalValue Evaluator::load(const BufferLoadNode* op, const std::vector<EvalValue>&) {
  not_implemented_error("evaluate: buffer load ", to_string(PrimExpr(op)), " has no value outside the interpreter");
}

EvalValue Evaluator::eval(const PrimExpr& e) {
  if (!e.defined()) value_error("evaluate: undefined expression");
  DataType t = e.dtype();
  int n = t.lanes();
  EvalValue out = make_value(t);
  switch (e.kind()) {
    case ExprKind::kIntImm:
      out.lanes[0].i = e.as<IntImmNode>()->value();
      return out;
    case ExprKind::kFloatImm:
      out.lanes[0].f = round_float(e.as<FloatImmNode>()->value(), t);
      return out;
    case ExprKind::kStringImm:
      type_error("evaluate: string ", to_string(e), " has no numeric value");
    case ExprKind::kVar: {
      const EvalValue* v = lookup(e.as<VarNode>());
      if (!v) value_error("evaluate: var '", e.as<VarNode>()->name(), "' is unbound");
      return *v;
    }
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                                                \
  case ExprKind::k##Name: {                                                                         \
    auto* op = e.as<Name##Node>();                                                                  \
    EvalValue a = eval(op->a()), b = eval(op->b());                                                 \
    DataType ot = op->a().dtype();                                                                  \
    for (int l = 0; l < n; ++l) {                                                                   \
      EvalScalar r = ot.is_float() ? float_op<ExprKind::k##Name>(lane(a, l).f, lane(b, l).f)        \
                                   : int_op<ExprKind::k##Name>(lane(a, l).i, lane(b, l).i, ot, op); \
      if (t.is_float())                                                                             \
        r.f = round_float(r.f, t);                                                                  \
      else                                                                                          \
        r.i = wrap_int(r.i, t);                                                                     \
      out.lanes[static_cast<size_t>(l)] = r;                                                        \
    }                                                                                               \
    return out;                                                                                     \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot: {
      EvalValue a = eval(e.as<NotNode>()->a());
      for (int l = 0; l < n; ++l) out.lanes[static_cast<size_t>(l)].i = lane(a, l).i == 0;
      return out;
    }
    case ExprKind::kSelect: {
      auto* op = e.as<SelectNode>();
      EvalValue c = eval(op->cond()), a = eval(op->true_value()), b = eval(op->false_value());
      for (int l = 0; l < n; ++l) out.lanes[static_cast<size_t>(l)] = lane(c, l).i ? lane(a, l) : lane(b, l);
      return out;
    }
    case ExprKind::kCast: {
      EvalValue a = eval(e.as<CastNode>()->value());
      DataType from = a.dtype;
      for (int l = 0; l < n; ++l) {
        EvalScalar& r = out.lanes[static_cast<size_t>(l)];
        double fv = a.as_float(l);
        if (t.is_float()) {
          r.f = round_float(fv, t);
        } else if (t.is_bool()) {
          r.i = from.is_float() ? fv != 0 : a.lanes[static_cast<size_t>(l)].i != 0;
        } else if (from.is_float()) {
          if (!(std::fabs(fv) < 9.2e18))
            value_error("evaluate ", to_string(e), ": ", fv, " does not fit ", dtype_name(t));
          r.i = wrap_int(static_cast<int64_t>(fv), t);
        } else {
          r.i = wrap_int(a.lanes[static_cast<size_t>(l)].i, t);
        }
      }
      return out;
    }
    case ExprKind::kRamp: {
      auto* op = e.as<RampNode>();
      int64_t base = eval(op->base()).as_int(), stride = eval(op->stride()).as_int();
      for (int l = 0; l < n; ++l)
        out.lanes[static_cast<size_t>(l)].i =
            wrap_int(static_cast<int64_t>(static_cast<uint64_t>(base) + static_cast<uint64_t>(stride) * l), t);
      return out;
    }
    case ExprKind::kBroadcast: {
      EvalValue a = eval(e.as<BroadcastNode>()->value());
      for (int l = 0; l < n; ++l) out.lanes[static_cast<size_t>(l)] = a.lanes[0];
      return out;
    }
    case ExprKind::kLet: {
      auto* op = e.as<LetNode>();
      EvalValue v = eval(op->value());
      std::optional<EvalValue> saved;
      if (const EvalValue* old = lookup(op->var().get())) saved = *old;
      bind(op->var(), std::move(v));
      EvalValue r = eval(op->body());
      if (saved)
        vars_[op->var().get()] = *saved;
      else
        unbind(op->var());
      return r;
    }
    case ExprKind::kCall: {
      auto* op = e.as<CallNode>();
      std::vector<EvalValue> args;
      for (const auto& a : op->args()) args.push_back(eval(a));
      bool float_args = op->args()[0].dtype().is_float();
      bool test = call_op_kind(op->op()) == IntrinsicKind::kFloatTest;
      for (int l = 0; l < n; ++l) {
        EvalScalar& r = out.lanes[static_cast<size_t>(l)];
        if (!float_args) {  // bitwise ops, abs on integers
          std::vector<int64_t> x;
          for (const auto& a : args) x.push_back(lane(a, l).i);
          r.i = intrinsic_int(op->op(), x, element_of(t));
          continue;
        }
        std::vector<double> x;
        for (const auto& a : args) x.push_back(lane(a, l).f);
        if (test)
          r.i = intrinsic_test(op->op(), x[0]);
        else
          r.f = round_float(intrinsic_float(op->op(), x), t);
      }
      return out;
    }
    case ExprKind::kBufferLoad: {
      auto* op = e.as<BufferLoadNode>();
      std::vector<EvalValue> idx;
      for (const auto& i : op->indices()) idx.push_back(eval(i));
      return load(op, idx);
    }
  }
  ANVIL_ICHECK(false, "unknown expression kind");
  return out;
}

namespace {

Evaluator with_bindings(const Bindings& bindings) {
  Evaluator ev;
  for (const auto& [var, value] : bindings) {
    if (auto* i = std::get_if<int64_t>(&value))
      ev.bind(var, EvalValue::of_int(*i));
    else
      ev.bind(var, EvalValue::of_float(std::get<double>(value)));
  }
  return ev;
}

}  // namespace

int64_t eval_int(const PrimExpr& e, const Bindings& bindings) {
  if (!e.defined()) value_error("eval_int: undefined expression");
  DataType t = e.dtype();
  if (t.lanes() != 1 || !(is_integer(t) || t.is_bool()))
    type_error("eval_int: ", to_string(e), " has dtype ", dtype_name(t), ", expected a scalar integer or bool");
  Evaluator ev = with_bindings(bindings);
  return ev.eval(e).as_int();
}

double eval_float(const PrimExpr& e, const Bindings& bindings) {
  if (!e.defined()) value_error("eval_float: undefined expression");
  DataType t = e.dtype();
  if (t.lanes() != 1 || !(is_numeric(t) || t.is_bool()))
    type_error("eval_float: ", to_string(e), " has dtype ", dtype_name(t), ", expected a scalar number");
  Evaluator ev = with_bindings(bindings);
  return ev.eval(e).as_float();
}

}  // namespace anvil::ir
