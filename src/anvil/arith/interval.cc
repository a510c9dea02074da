// Constant-folding index builders and interval evaluation.
#include "anvil/arith/interval.h"

#include <algorithm>

#include "anvil/base/int_math.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/structural_equal.h"

namespace anvil::arith {
namespace {

std::optional<int64_t> cint(const PrimExpr& e) {
  if (auto* i = e.as<ir::IntImmNode>()) return i->value();
  return std::nullopt;
}

PrimExpr imm_like(const PrimExpr& a, const PrimExpr& b, int64_t v) {
  return ir::int_imm(v, a.as<ir::IntImmNode>() ? b.dtype() : a.dtype());
}

}  // namespace

PrimExpr fold_add(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb) return imm_like(a, b, *ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  if (cb) {
    // (x + c1) + c2 and (x - c1) + c2 fold their constants.
    if (auto* add = a.as<ir::AddNode>(); add && cint(add->b()))
      return fold_add(add->a(), imm_like(a, b, *cint(add->b()) + *cb));
    if (auto* sub = a.as<ir::SubNode>(); sub && cint(sub->b()))
      return fold_add(sub->a(), imm_like(a, b, *cb - *cint(sub->b())));
    if (*cb < 0) return a - ir::int_imm(-*cb, b.dtype());
  }
  return a + b;
}

PrimExpr fold_sub(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb) return imm_like(a, b, *ca - *cb);
  if (cb && *cb == 0) return a;
  if (ir::structural_equal(a, b)) return imm_like(a, b, 0);
  // (x + c1) - c2, (x + y) - y, (x + y) - x
  if (auto* add = a.as<ir::AddNode>()) {
    if (ir::structural_equal(add->b(), b)) return add->a();
    if (ir::structural_equal(add->a(), b)) return add->b();
    auto c1 = cint(add->b());
    if (c1 && cb) return fold_add(add->a(), imm_like(a, b, *c1 - *cb));
  }
  if (auto* sub = a.as<ir::SubNode>()) {
    auto c1 = cint(sub->b());
    if (c1 && cb) return fold_sub(sub->a(), imm_like(a, b, *c1 + *cb));
  }
  return a - b;
}

PrimExpr fold_mul(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb) return imm_like(a, b, *ca * *cb);
  if ((ca && *ca == 0) || (cb && *cb == 0)) return imm_like(a, b, 0);
  if (ca && *ca == 1) return b;
  if (cb && *cb == 1) return a;
  return a * b;
}

PrimExpr fold_floordiv(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb && *cb != 0) return imm_like(a, b, floordiv_i64(*ca, *cb));
  if (cb && *cb == 1) return a;
  return ir::floordiv(a, b);
}

PrimExpr fold_floormod(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb && *cb != 0) return imm_like(a, b, *ca - floordiv_i64(*ca, *cb) * *cb);
  if (cb && *cb == 1) return imm_like(a, b, 0);
  return ir::floormod(a, b);
}

PrimExpr fold_min(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb) return imm_like(a, b, std::min(*ca, *cb));
  if (ir::structural_equal(a, b)) return a;
  return ir::min(a, b);
}

PrimExpr fold_max(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb) return imm_like(a, b, std::max(*ca, *cb));
  if (ir::structural_equal(a, b)) return a;
  return ir::max(a, b);
}

PrimExpr fold_ceildiv(const PrimExpr& a, const PrimExpr& b) {
  auto ca = cint(a), cb = cint(b);
  if (ca && cb && *cb > 0) return imm_like(a, b, floordiv_i64(*ca + *cb - 1, *cb));
  if (cb && *cb == 1) return a;
  return fold_floordiv(fold_add(a, fold_sub(b, imm_like(b, a, 1))), b);
}

namespace {

bool mentions_relaxed(const PrimExpr& e, const RelaxSpec& spec) {
  struct V : ir::ExprVisitor {
    const RelaxSpec* spec;
    bool found = false;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::VarNode* op) override {
      if (!spec->keep.count(op) && spec->extent.count(op)) found = true;
    }
  } v;
  v.spec = &spec;
  v.visit_expr(e);
  return v.found;
}

class IntervalEval {
 public:
  explicit IntervalEval(const RelaxSpec& spec) : spec_(spec) {}

  std::optional<Interval> eval(const PrimExpr& e) {
    if (!mentions_relaxed(e, spec_)) return Interval{e, e};
    if (auto* v = e.as<ir::VarNode>()) {
      auto ext = eval(spec_.extent.at(v));
      if (!ext) return std::nullopt;
      return Interval{ir::int_imm(0, e.dtype()), fold_sub(ext->hi, ir::int_imm(1, e.dtype()))};
    }
    if (auto* op = e.as<ir::AddNode>())
      return binary(op->a(), op->b(), [](auto& x, auto& y) {
        return Interval{fold_add(x.lo, y.lo), fold_add(x.hi, y.hi)};
      });
    if (auto* op = e.as<ir::SubNode>())
      return binary(op->a(), op->b(), [](auto& x, auto& y) {
        return Interval{fold_sub(x.lo, y.hi), fold_sub(x.hi, y.lo)};
      });
    if (auto* op = e.as<ir::MulNode>()) return binary(op->a(), op->b(), [](auto& x, auto& y) { return mul(x, y); });
    if (auto* op = e.as<ir::MinNode>())
      return binary(op->a(), op->b(), [](auto& x, auto& y) {
        return Interval{fold_min(x.lo, y.lo), fold_min(x.hi, y.hi)};
      });
    if (auto* op = e.as<ir::MaxNode>())
      return binary(op->a(), op->b(), [](auto& x, auto& y) {
        return Interval{fold_max(x.lo, y.lo), fold_max(x.hi, y.hi)};
      });
    if (auto* op = e.as<ir::FloorDivNode>()) return by_positive_const(op->a(), op->b(), true);
    if (auto* op = e.as<ir::DivNode>()) {
      // Truncating division is monotone too; only exact for non-negative numerators, which is
      // what index expressions are. Treat as floordiv.
      return by_positive_const(op->a(), op->b(), true);
    }
    if (auto* op = e.as<ir::FloorModNode>()) return by_positive_const(op->a(), op->b(), false);
    if (auto* op = e.as<ir::SelectNode>())
      return binary(op->true_value(), op->false_value(), [](auto& x, auto& y) {
        return Interval{fold_min(x.lo, y.lo), fold_max(x.hi, y.hi)};
      });
    if (auto* op = e.as<ir::CastNode>()) {
      if (!ir::is_integer(e.dtype()) || !ir::is_integer(op->value().dtype())) return std::nullopt;
      auto x = eval(op->value());
      if (!x) return std::nullopt;
      return Interval{ir::cast(e.dtype(), x->lo), ir::cast(e.dtype(), x->hi)};
    }
    return std::nullopt;
  }

 private:
  template <typename F>
  std::optional<Interval> binary(const PrimExpr& a, const PrimExpr& b, F f) {
    auto x = eval(a);
    if (!x) return std::nullopt;
    auto y = eval(b);
    if (!y) return std::nullopt;
    return f(*x, *y);
  }

  static Interval mul(const Interval& x, const Interval& y) {
    auto c = [](const Interval& i) { return i.is_point() ? cint(i.lo) : std::nullopt; };
    if (auto cy = c(y)) {
      if (*cy >= 0) return Interval{fold_mul(x.lo, y.lo), fold_mul(x.hi, y.lo)};
      return Interval{fold_mul(x.hi, y.lo), fold_mul(x.lo, y.lo)};
    }
    if (auto cx = c(x)) return mul(y, x);
    PrimExpr a = fold_mul(x.lo, y.lo), b = fold_mul(x.lo, y.hi), d = fold_mul(x.hi, y.lo), e = fold_mul(x.hi, y.hi);
    return Interval{fold_min(fold_min(a, b), fold_min(d, e)), fold_max(fold_max(a, b), fold_max(d, e))};
  }

  // b with its constant sub-expressions folded: a divisor written as floordiv(32, 32) (a conv's
  // channels per group) is the constant 1, which cint alone would not see.
  static PrimExpr fold_constants(const PrimExpr& b) {
    auto fold2 = [](const auto* op, auto f) { return f(fold_constants(op->a()), fold_constants(op->b())); };
    if (auto* op = b.as<ir::AddNode>()) return fold2(op, fold_add);
    if (auto* op = b.as<ir::SubNode>()) return fold2(op, fold_sub);
    if (auto* op = b.as<ir::MulNode>()) return fold2(op, fold_mul);
    if (auto* op = b.as<ir::FloorDivNode>()) return fold2(op, fold_floordiv);
    if (auto* op = b.as<ir::FloorModNode>()) return fold2(op, fold_floormod);
    return b;
  }

  std::optional<Interval> by_positive_const(const PrimExpr& a, const PrimExpr& b_in, bool div) {
    const PrimExpr b = fold_constants(b_in);
    auto cb = cint(b);
    if (!cb || *cb <= 0 || mentions_relaxed(b, spec_)) return std::nullopt;
    auto x = eval(a);
    if (!x) return std::nullopt;
    if (div) return Interval{fold_floordiv(x->lo, b), fold_floordiv(x->hi, b)};
    // A point (a kept loop var: a fused axis compute_at attaches to) stays a point.
    if (ir::structural_equal(x->lo, x->hi)) return Interval{fold_floormod(x->lo, b), fold_floormod(x->hi, b)};
    auto lo = cint(x->lo), hi = cint(x->hi);
    if (lo && hi && floordiv_i64(*lo, *cb) == floordiv_i64(*hi, *cb))
      return Interval{fold_floormod(x->lo, b), fold_floormod(x->hi, b)};
    return Interval{ir::int_imm(0, e_dtype(a)), ir::int_imm(*cb - 1, e_dtype(a))};
  }
  static ir::DataType e_dtype(const PrimExpr& e) { return e.dtype(); }

  const RelaxSpec& spec_;
};

}  // namespace

std::optional<Interval> eval_interval(const PrimExpr& e, const RelaxSpec& spec) { return IntervalEval(spec).eval(e); }

}  // namespace anvil::arith
