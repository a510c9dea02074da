// Analyzer: variable knowledge, constant integer bounds, provers.
#include "anvil/arith/analyzer.h"

#include <algorithm>

#include "anvil/arith/const_fold.h"
#include "anvil/ir/buffer.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::arith {

using namespace ir;  // NOLINT(google-build-using-namespace): node classes

namespace {

__extension__ using i128 = __int128;
constexpr int64_t kPos = ConstIntBound::kPosInf, kNeg = ConstIntBound::kNegInf;

bool is_inf(int64_t v) { return v == kPos || v == kNeg; }
int64_t clamp128(i128 v) {
  if (v >= static_cast<i128>(kPos)) return kPos;
  if (v <= static_cast<i128>(kNeg)) return kNeg;
  return static_cast<int64_t>(v);
}
int64_t sat_add(int64_t a, int64_t b) {
  if (a == kNeg || b == kNeg) return (a == kPos || b == kPos) ? 0 : kNeg;  // never both in a bound end
  if (a == kPos || b == kPos) return kPos;
  return clamp128(static_cast<i128>(a) + b);
}
int64_t sat_neg(int64_t a) { return a == kNeg ? kPos : (a == kPos ? kNeg : -a); }
int64_t sat_mul(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (is_inf(a) || is_inf(b)) return ((a < 0) != (b < 0)) ? kNeg : kPos;
  return clamp128(static_cast<i128>(a) * b);
}

ConstIntBound from_corners(std::initializer_list<int64_t> v) { return {std::min(v), std::max(v)}; }

ConstIntBound add(ConstIntBound a, ConstIntBound b) { return {sat_add(a.min, b.min), sat_add(a.max, b.max)}; }
ConstIntBound neg(ConstIntBound a) { return {sat_neg(a.max), sat_neg(a.min)}; }
ConstIntBound mul(ConstIntBound a, ConstIntBound b) {
  return from_corners({sat_mul(a.min, b.min), sat_mul(a.min, b.max), sat_mul(a.max, b.min), sat_mul(a.max, b.max)});
}
ConstIntBound intersect(ConstIntBound a, ConstIntBound b) {
  ConstIntBound r{std::max(a.min, b.min), std::min(a.max, b.max)};
  return r.min <= r.max ? r : a;  // contradictory knowledge: keep the first
}
ConstIntBound unite(ConstIntBound a, ConstIntBound b) { return {std::min(a.min, b.min), std::max(a.max, b.max)}; }

// a / d with rounding `floor` (else toward zero), d finite and non-zero; infinities stay.
int64_t div_end(int64_t a, int64_t d, bool floor) {
  if (is_inf(a)) return ((a < 0) != (d < 0)) ? kNeg : kPos;
  if (a == kNeg + 1 && d == -1) return kPos;
  return floor ? floordiv_i64(a, d) : a / d;
}

ConstIntBound divide(ConstIntBound a, ConstIntBound d, bool floor, DataType t) {
  if (d.min <= 0 && d.max >= 0) return ConstIntBound::of_dtype(t);
  if (is_inf(d.min) || is_inf(d.max)) {
    // |d| unbounded: the quotient lies between 0 and a / (smallest |d|).
    int64_t dd = d.min > 0 ? d.min : d.max;
    return unite(from_corners({div_end(a.min, dd, floor), div_end(a.max, dd, floor)}),
                 floor ? ConstIntBound{-1, 0} : ConstIntBound{0, 0});
  }
  return from_corners({div_end(a.min, d.min, floor), div_end(a.min, d.max, floor), div_end(a.max, d.min, floor),
                       div_end(a.max, d.max, floor)});
}

ConstIntBound floormod_bound(ConstIntBound a, ConstIntBound d, DataType t) {
  if (d.is_const() && d.min > 0 && !is_inf(a.min) && !is_inf(a.max) &&
      floordiv_i64(a.min, d.min) == floordiv_i64(a.max, d.min))
    return {floormod_i64(a.min, d.min), floormod_i64(a.max, d.min)};
  if (d.min > 0) {
    int64_t hi = d.max == kPos ? kPos : d.max - 1;
    if (a.min >= 0) hi = std::min(hi, a.max);
    return {0, hi};
  }
  if (d.max < 0) return {d.min == kNeg ? kNeg : d.min + 1, 0};
  return ConstIntBound::of_dtype(t);
}

}  // namespace

ConstIntBound ConstIntBound::of_dtype(DataType t) {
  if (t.is_bool()) return {0, 1};
  if (t.is_int()) {
    if (t.bits() >= 64) return {};
    return {-(int64_t{1} << (t.bits() - 1)), (int64_t{1} << (t.bits() - 1)) - 1};
  }
  if (t.is_uint()) return {0, t.bits() >= 63 ? kPos : (int64_t{1} << t.bits()) - 1};
  return {};
}

std::string ConstIntBound::to_string() const {
  auto end = [](int64_t v) { return v == kPos ? std::string("inf") : v == kNeg ? std::string("-inf") : std::to_string(v); };
  return "[" + end(min) + ", " + end(max) + "]";
}

// ---- binding ------------------------------------------------------------------------------

BindScope& BindScope::operator=(BindScope&& o) noexcept {
  if (this != &o) {
    restore();
    ana_ = o.ana_;
    saved_ = std::move(o.saved_);
    o.ana_ = nullptr;
  }
  return *this;
}

void BindScope::restore() {
  if (!ana_) return;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    if (it->second)
      ana_->vars_[it->first.get()] = {it->first, *it->second};
    else
      ana_->vars_.erase(it->first.get());
  }
  saved_.clear();
  ana_ = nullptr;
}

BindScope Analyzer::set(const Var& v, VarInfo info) {
  std::optional<VarInfo> prev;
  if (auto it = vars_.find(v.get()); it != vars_.end()) prev = it->second.second;
  vars_[v.get()] = {v, std::move(info)};
  std::vector<std::pair<Var, std::optional<VarInfo>>> saved;
  saved.emplace_back(v, std::move(prev));
  return BindScope(this, std::move(saved));
}

BindScope Analyzer::bind(const Var& v, const PrimExpr& min, const PrimExpr& extent) {
  ConstIntBound bmin = const_int_bound(min), bext = const_int_bound(extent);
  ConstIntBound b{bmin.min, sat_add(bmin.max, sat_add(bext.max, -1))};
  if (b.max < b.min) b.max = b.min;  // empty range: the body never runs
  b = intersect(b, ConstIntBound::of_dtype(v.dtype()));
  return set(v, VarInfo{min, extent, b});
}

BindScope Analyzer::bind(const Var& v, ConstIntBound bound) { return set(v, VarInfo{PrimExpr(), PrimExpr(), bound}); }

BindScope Analyzer::bind_value(const Var& v, const PrimExpr& value) {
  if (!is_integer(v.dtype()) || v.dtype().lanes() != 1) return BindScope();
  return set(v, VarInfo{value, make_const(v.dtype(), 1), const_int_bound(value)});
}

BindScope Analyzer::assume(const PrimExpr& cond) {
  std::vector<PrimExpr> conj{cond};
  std::vector<std::pair<Var, std::optional<VarInfo>>> saved;
  while (!conj.empty()) {
    PrimExpr c = conj.back();
    conj.pop_back();
    if (auto* a = c.as<AndNode>()) {
      conj.push_back(a->a());
      conj.push_back(a->b());
      continue;
    }
    // Normalise to v OP e with OP in {<, <=, ==, >, >=}.
    auto try_form = [&](const PrimExpr& lhs, const PrimExpr& rhs, int lo_adj, int hi_adj, bool lo, bool hi) {
      auto* v = lhs.as<VarNode>();
      if (!v || !is_integer(v->dtype())) return;
      ConstIntBound e = const_int_bound(rhs);
      Var var(v);
      const VarInfo* old = lookup(var);
      VarInfo info = old ? *old : VarInfo{PrimExpr(), PrimExpr(), ConstIntBound::of_dtype(var.dtype())};
      ConstIntBound nb = info.bound;
      if (lo && !is_inf(e.min)) nb.min = std::max(nb.min, sat_add(e.min, lo_adj));
      if (hi && !is_inf(e.max)) nb.max = std::min(nb.max, sat_add(e.max, hi_adj));
      if (nb.min > nb.max) return;
      saved.emplace_back(var, old ? std::optional<VarInfo>(*old) : std::nullopt);
      info.bound = nb;
      vars_[v] = {var, info};
    };
    if (auto* n = c.as<LTNode>()) { try_form(n->a(), n->b(), 0, -1, false, true); try_form(n->b(), n->a(), 1, 0, true, false); }
    if (auto* n = c.as<LENode>()) { try_form(n->a(), n->b(), 0, 0, false, true); try_form(n->b(), n->a(), 0, 0, true, false); }
    if (auto* n = c.as<GTNode>()) { try_form(n->a(), n->b(), 1, 0, true, false); try_form(n->b(), n->a(), 0, -1, false, true); }
    if (auto* n = c.as<GENode>()) { try_form(n->a(), n->b(), 0, 0, true, false); try_form(n->b(), n->a(), 0, 0, false, true); }
    if (auto* n = c.as<EQNode>()) { try_form(n->a(), n->b(), 0, 0, true, true); try_form(n->b(), n->a(), 0, 0, true, true); }
  }
  return BindScope(this, std::move(saved));
}

const VarInfo* Analyzer::lookup(const Var& v) const {
  auto it = vars_.find(v.get());
  return it == vars_.end() ? nullptr : &it->second.second;
}

// ---- constant integer bounds --------------------------------------------------------------

ConstIntBound Analyzer::const_int_bound(const PrimExpr& e) const {
  DataType t = e.dtype();
  ConstIntBound full = ConstIntBound::of_dtype(element_of(t));
  if (!is_integer(t) && !t.is_bool()) return full;
  auto sub = [this](const PrimExpr& x) { return const_int_bound(x); };
  ConstIntBound r = full;
  switch (e.kind()) {
    case ExprKind::kIntImm: return ConstIntBound::point(e.as<IntImmNode>()->value());
    case ExprKind::kVar: {
      Var v(e.as<VarNode>());
      if (const VarInfo* info = lookup(v)) return intersect(info->bound, full);
      if (v->is_size_var()) return {0, full.max};
      return full;
    }
    case ExprKind::kAdd: r = add(sub(e.as<AddNode>()->a()), sub(e.as<AddNode>()->b())); break;
    case ExprKind::kSub: r = add(sub(e.as<SubNode>()->a()), neg(sub(e.as<SubNode>()->b()))); break;
    case ExprKind::kMul: r = mul(sub(e.as<MulNode>()->a()), sub(e.as<MulNode>()->b())); break;
    case ExprKind::kDiv: r = divide(sub(e.as<DivNode>()->a()), sub(e.as<DivNode>()->b()), false, t); break;
    case ExprKind::kFloorDiv:
      r = divide(sub(e.as<FloorDivNode>()->a()), sub(e.as<FloorDivNode>()->b()), true, t);
      break;
    case ExprKind::kFloorMod:
      r = floormod_bound(sub(e.as<FloorModNode>()->a()), sub(e.as<FloorModNode>()->b()), t);
      break;
    case ExprKind::kMin: {
      ConstIntBound a = sub(e.as<MinNode>()->a()), b = sub(e.as<MinNode>()->b());
      r = {std::min(a.min, b.min), std::min(a.max, b.max)};
      break;
    }
    case ExprKind::kMax: {
      ConstIntBound a = sub(e.as<MaxNode>()->a()), b = sub(e.as<MaxNode>()->b());
      r = {std::max(a.min, b.min), std::max(a.max, b.max)};
      break;
    }
    case ExprKind::kSelect:
      r = unite(sub(e.as<SelectNode>()->true_value()), sub(e.as<SelectNode>()->false_value()));
      break;
    case ExprKind::kCast: {
      const PrimExpr& v = e.as<CastNode>()->value();
      if (t.is_bool()) return {0, 1};
      if (is_integer(v.dtype()) || v.dtype().is_bool()) {
        ConstIntBound b = sub(v);
        if (b.min >= full.min && b.max <= full.max) return b;
      }
      return full;
    }
    case ExprKind::kRamp: {
      auto* n = e.as<RampNode>();
      r = add(sub(n->base()), mul(sub(n->stride()), ConstIntBound{0, n->lanes() - 1}));
      break;
    }
    case ExprKind::kBroadcast: return sub(e.as<BroadcastNode>()->value());
    case ExprKind::kLet: {
      auto* n = e.as<LetNode>();
      Analyzer inner = *this;
      auto scope = inner.bind_value(n->var(), n->value());
      return inner.const_int_bound(n->body());
    }
    case ExprKind::kCall: {
      auto* n = e.as<CallNode>();
      if (n->op() == CallOp::k_abs) {
        ConstIntBound a = sub(n->args()[0]);
        if (a.min >= 0) return a;
        return {0, std::max(sat_neg(a.min), a.max)};
      }
      return full;
    }
    default:
      if (t.is_bool()) return {0, 1};
      return full;
  }
  return intersect(r, full);
}

// ---- provers ------------------------------------------------------------------------------

bool Analyzer::can_prove(const PrimExpr& cond) const {
  PrimExpr s = simplify(cond);
  auto v = as_const_int(s);
  return v && *v != 0;
}

bool Analyzer::can_prove_less(const PrimExpr& a, const PrimExpr& b) const { return can_prove(lt(a, b)); }
bool Analyzer::can_prove_less_equal(const PrimExpr& a, const PrimExpr& b) const { return can_prove(le(a, b)); }
bool Analyzer::can_prove_greater_equal(const PrimExpr& a, const PrimExpr& b) const { return can_prove(ge(a, b)); }
bool Analyzer::can_prove_equal(const PrimExpr& a, const PrimExpr& b) const { return can_prove(eq(a, b)); }

}  // namespace anvil::arith
