// Constant folding semantics: integer wrap-around, C and floor division, float rounding, casts.
#include "anvil/arith/const_fold.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "anvil/ir/eval.h"

namespace anvil::arith {

using ir::DataType;
using ir::ExprKind;
using ir::FloatImmNode;
using ir::IntImmNode;
using ir::PrimExpr;

std::optional<int64_t> wrap_int(DataType t, int64_t v) {
  if (t.is_bool()) return v != 0 ? 1 : 0;
  int bits = t.bits();
  auto u = static_cast<uint64_t>(v);
  if (t.is_int()) {
    if (bits >= 64) return v;
    uint64_t mask = (uint64_t{1} << bits) - 1, sign = uint64_t{1} << (bits - 1);
    u &= mask;
    return (u & sign) ? static_cast<int64_t>(u | ~mask) : static_cast<int64_t>(u);
  }
  if (bits < 64) return static_cast<int64_t>(u & ((uint64_t{1} << bits) - 1));
  if (v < 0) return std::nullopt;  // uint64 value >= 2^63: no int64 storage for it
  return v;
}

namespace {

bool is_cmp(ExprKind k) {
  return k == ExprKind::kEQ || k == ExprKind::kNE || k == ExprKind::kLT || k == ExprKind::kLE ||
         k == ExprKind::kGT || k == ExprKind::kGE;
}

template <typename T>
bool compare(ExprKind k, T a, T b) {
  switch (k) {
    case ExprKind::kEQ: return a == b;
    case ExprKind::kNE: return a != b;
    case ExprKind::kLT: return a < b;
    case ExprKind::kLE: return a <= b;
    case ExprKind::kGT: return a > b;
    default: return a >= b;
  }
}

PrimExpr int_result(DataType t, std::optional<int64_t> v) {
  if (!v) return PrimExpr();
  auto w = wrap_int(t, *v);
  return w ? IntImmNode::make(t, *w) : PrimExpr();
}

PrimExpr fold_int(ExprKind k, DataType t, int64_t a, int64_t b) {
  if (is_cmp(k)) return ir::bool_imm(compare(k, a, b));
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  switch (k) {
    case ExprKind::kAdd: return int_result(t, static_cast<int64_t>(ua + ub));
    case ExprKind::kSub: return int_result(t, static_cast<int64_t>(ua - ub));
    case ExprKind::kMul: return int_result(t, static_cast<int64_t>(ua * ub));
    case ExprKind::kDiv:
      if (b == 0) return PrimExpr();
      return int_result(t, a == kMin && b == -1 ? kMin : a / b);
    case ExprKind::kFloorDiv:
      if (b == 0) return PrimExpr();
      return int_result(t, floordiv_i64(a, b));  // kMin // -1 wraps
    case ExprKind::kFloorMod:
      if (b == 0) return PrimExpr();
      return int_result(t, floormod_i64(a, b));
    case ExprKind::kMin: return int_result(t, std::min(a, b));
    case ExprKind::kMax: return int_result(t, std::max(a, b));
    case ExprKind::kAnd: return int_result(t, (a != 0 && b != 0) ? 1 : 0);
    case ExprKind::kOr: return int_result(t, (a != 0 || b != 0) ? 1 : 0);
    default: return PrimExpr();
  }
}

PrimExpr fold_float(ExprKind k, DataType t, double a, double b) {
  if (is_cmp(k)) return ir::bool_imm(compare(k, a, b));
  double r = 0;
  switch (k) {
    case ExprKind::kAdd: r = a + b; break;
    case ExprKind::kSub: r = a - b; break;
    case ExprKind::kMul: r = a * b; break;
    case ExprKind::kDiv:
      if (b == 0) return PrimExpr();
      r = a / b;
      break;
    case ExprKind::kFloorDiv:
      if (b == 0) return PrimExpr();
      r = std::floor(a / b);
      break;
    case ExprKind::kFloorMod:
      if (b == 0) return PrimExpr();
      r = a - std::floor(a / b) * b;
      break;
    case ExprKind::kMin:
    case ExprKind::kMax:
      if (std::isnan(a) || std::isnan(b)) return PrimExpr();
      r = (k == ExprKind::kMin) == (a < b) ? a : b;
      break;
    default: return PrimExpr();
  }
  return FloatImmNode::make(t, round_float(t, r));
}

}  // namespace

// The evaluator's rounding (ir/float16.h for float16/bfloat16), so folding and evaluation agree.
double round_float(DataType t, double v) { return ir::round_float(v, t); }

PrimExpr fold_binary(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  if (a.dtype() != b.dtype() || a.dtype().lanes() != 1) return PrimExpr();
  DataType t = a.dtype();
  auto* ia = a.as<IntImmNode>();
  auto* ib = b.as<IntImmNode>();
  if (ia && ib) return fold_int(k, t, ia->value(), ib->value());
  auto* fa = a.as<FloatImmNode>();
  auto* fb = b.as<FloatImmNode>();
  // Immediates are read at their dtype's precision (a float32 FloatImm may hold more bits).
  if (fa && fb) return fold_float(k, t, round_float(t, fa->value()), round_float(t, fb->value()));
  return PrimExpr();
}

PrimExpr fold_cast(DataType t, const PrimExpr& value) {
  if (t.lanes() != 1) return PrimExpr();
  if (auto* i = value.as<IntImmNode>()) {
    if (t.is_float()) return FloatImmNode::make(t, round_float(t, static_cast<double>(i->value())));
    return int_result(t, i->value());
  }
  if (auto* f = value.as<FloatImmNode>()) {
    double v = round_float(value.dtype(), f->value());
    if (t.is_float()) return FloatImmNode::make(t, round_float(t, v));
    if (t.is_bool()) return ir::bool_imm(v != 0);
    if (std::isnan(v)) return PrimExpr();
    double tv = std::trunc(v);
    // Only values the target type holds (anything else is undefined behaviour in C).
    double lo = t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1);
    double hi = t.is_uint() ? std::ldexp(1.0, t.bits()) : std::ldexp(1.0, t.bits() - 1);
    if (tv < lo || tv >= hi || tv >= 9.2e18) return PrimExpr();
    return int_result(t, static_cast<int64_t>(tv));
  }
  return PrimExpr();
}

PrimExpr fold_call(ir::CallOp op, const std::vector<PrimExpr>& args) {
  using ir::CallOp;
  using ir::IntrinsicKind;
  if (args.empty() || args[0].dtype().lanes() != 1) return PrimExpr();
  DataType t = args[0].dtype();
  if (ir::is_integer(t)) {  // abs and the bitwise intrinsics
    std::vector<int64_t> v;
    for (const auto& a : args) {
      auto* i = a.as<IntImmNode>();
      if (!i) return PrimExpr();
      v.push_back(i->value());
    }
    return int_result(t, ir::intrinsic_int(op, v, t));
  }
  std::vector<double> v;
  for (const auto& a : args) {
    auto* f = a.as<FloatImmNode>();
    if (!f) return PrimExpr();
    v.push_back(round_float(t, f->value()));
  }
  if (ir::call_op_kind(op) == IntrinsicKind::kFloatTest) return ir::bool_imm(ir::intrinsic_test(op, v[0]));
  if (op == CallOp::k_round) return PrimExpr();  // as before: half-even vs half-away differs between back ends
  double r = ir::intrinsic_float(op, v);
  // A NaN from a non-NaN input (log(-1), asin(2)) stays a call, so the domain error stays visible.
  if (std::isnan(r) && !std::isnan(v[0])) return PrimExpr();
  return FloatImmNode::make(t, round_float(t, r));
}

}  // namespace anvil::arith
