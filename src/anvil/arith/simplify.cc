// The rewriting simplifier (rules listed in simplify.h).
#include "anvil/arith/simplify.h"

#include <algorithm>

#include "anvil/arith/const_fold.h"
#include "anvil/arith/expr_compare.h"
#include "anvil/arith/linear.h"
#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"

namespace anvil::arith {

using namespace ir;  // NOLINT(google-build-using-namespace): node classes

namespace {

constexpr int64_t kPos = ConstIntBound::kPosInf, kNeg = ConstIntBound::kNegInf;
bool finite(const ConstIntBound& b) { return b.min != kNeg && b.max != kPos; }

PrimExpr make_bin(ExprKind k, PrimExpr a, PrimExpr b) {
  switch (k) {
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) \
  case ExprKind::k##Name:                            \
    return Name##Node::make(std::move(a), std::move(b));
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    default: break;
  }
  ANVIL_ICHECK(false, "make_bin: not a binary kind: ", expr_kind_name(k));
  return PrimExpr();
}

bool is_cmp(ExprKind k) {
  return k == ExprKind::kEQ || k == ExprKind::kNE || k == ExprKind::kLT || k == ExprKind::kLE ||
         k == ExprKind::kGT || k == ExprKind::kGE;
}

// a k b  <=>  b flip(k) a
ExprKind flip(ExprKind k) {
  switch (k) {
    case ExprKind::kLT: return ExprKind::kGT;
    case ExprKind::kLE: return ExprKind::kGE;
    case ExprKind::kGT: return ExprKind::kLT;
    case ExprKind::kGE: return ExprKind::kLE;
    default: return k;
  }
}

// not (a k b)  <=>  a negate(k) b   (integers only)
ExprKind negate(ExprKind k) {
  switch (k) {
    case ExprKind::kLT: return ExprKind::kGE;
    case ExprKind::kLE: return ExprKind::kGT;
    case ExprKind::kGT: return ExprKind::kLE;
    case ExprKind::kGE: return ExprKind::kLT;
    case ExprKind::kEQ: return ExprKind::kNE;
    default: return ExprKind::kEQ;
  }
}

// The truth of (d k 0) for every d in b, when decided.
std::optional<bool> decide(ExprKind k, const ConstIntBound& b) {
  switch (k) {
    case ExprKind::kLT: if (b.max < 0) return true; if (b.min >= 0) return false; break;
    case ExprKind::kLE: if (b.max <= 0) return true; if (b.min > 0) return false; break;
    case ExprKind::kGT: if (b.min > 0) return true; if (b.max <= 0) return false; break;
    case ExprKind::kGE: if (b.min >= 0) return true; if (b.max < 0) return false; break;
    case ExprKind::kEQ: if (b.min == 0 && b.max == 0) return true; if (b.max < 0 || b.min > 0) return false; break;
    case ExprKind::kNE: if (b.min == 0 && b.max == 0) return false; if (b.max < 0 || b.min > 0) return true; break;
    default: break;
  }
  return std::nullopt;
}

std::optional<int64_t> const_value(const PrimExpr& e) { return as_const_int(e); }

PrimExpr make_ramp(const PrimExpr& base, const PrimExpr& stride, int lanes) {
  if (auto s = const_value(stride); s && *s == 0) return BroadcastNode::make(base, lanes);
  return RampNode::make(base, stride, lanes);
}

// Factors of a product (Mul nodes flattened).
void factors(const PrimExpr& e, std::vector<PrimExpr>* out) {
  if (auto* m = e.as<MulNode>()) {
    factors(m->a(), out);
    factors(m->b(), out);
  } else {
    out->push_back(e);
  }
}

PrimExpr product(const PrimExpr& x, const PrimExpr& y) {
  std::vector<PrimExpr> f;
  factors(x, &f);
  factors(y, &f);
  std::stable_sort(f.begin(), f.end(), [](const PrimExpr& a, const PrimExpr& b) { return compare_expr(a, b) < 0; });
  PrimExpr out = f[0];
  for (size_t i = 1; i < f.size(); ++i) out = MulNode::make(out, f[i]);
  return out;
}

class Simplifier : public ExprMutator {
 public:
  explicit Simplifier(const Analyzer& ana) : ana_(ana) {}
  using ExprMutator::mutate_;

#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec) \
  PrimExpr mutate_(const Name##Node* op) override { return visit_bin(op); }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND

  PrimExpr mutate_(const NotNode* op) override { return keep(op, logic_not(mutate_expr(op->a()))); }
  PrimExpr mutate_(const SelectNode* op) override;
  PrimExpr mutate_(const CastNode* op) override;
  PrimExpr mutate_(const RampNode* op) override {
    return keep(op, make_ramp(mutate_expr(op->base()), mutate_expr(op->stride()), op->lanes()));
  }
  PrimExpr mutate_(const LetNode* op) override;
  PrimExpr mutate_(const CallNode* op) override {
    PrimExpr r = ExprMutator::mutate_(op);
    if (auto* c = r.as<CallNode>()) {
      PrimExpr f = fold_call(c->op(), c->args());
      if (f.defined()) return f;
    }
    return r;
  }

  // a k b for simplified operands: the simplified result.
  PrimExpr bin(ExprKind k, const PrimExpr& a, const PrimExpr& b);

 private:
  template <typename T>
  PrimExpr visit_bin(const T* op) {
    return keep(op, bin(T::kKind, mutate_expr(op->a()), mutate_expr(op->b())));
  }
  // The original node when r is structurally the same.
  PrimExpr keep(const PrimExprNode* op, PrimExpr r) {
    PrimExpr orig = ref_of(op);
    return compare_expr(orig, r) == 0 ? orig : r;
  }
  ConstIntBound bound(const PrimExpr& e) const { return ana_.const_int_bound(e); }

  PrimExpr vector_bin(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr linear_arith(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr div_mod(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr floordiv_const(const PrimExpr& a, int64_t c, bool trunc);
  PrimExpr floormod_const(const PrimExpr& a, int64_t c);
  PrimExpr min_max(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr compare(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr logic(ExprKind k, const PrimExpr& a, const PrimExpr& b);
  PrimExpr logic_not(const PrimExpr& a);
  // Bound of a signed scalar d, refined with symbolic substitution of loop ranges.
  ConstIntBound refined_bound(const PrimExpr& d) const;

  const Analyzer& ana_;
};

ConstIntBound Simplifier::refined_bound(const PrimExpr& d) const {
  ConstIntBound b = bound(d);
  if (b.is_const()) return b;
  PrimExpr ub = ana_.symbolic_bound(d, true), lb = ana_.symbolic_bound(d, false);
  if (ub.defined()) b.max = std::min(b.max, bound(ub).max);
  if (lb.defined()) b.min = std::max(b.min, bound(lb).min);
  return b;
}

PrimExpr Simplifier::bin(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  if (PrimExpr f = fold_binary(k, a, b); f.defined()) return f;
  if (a.dtype().lanes() > 1) return vector_bin(k, a, b);
  DataType t = a.dtype();
  switch (k) {
    case ExprKind::kAdd:
    case ExprKind::kSub:
    case ExprKind::kMul:
      if (is_linear_type(t)) return linear_arith(k, a, b);
      {
        auto cb = const_value(b);
        auto fb = b.as<FloatImmNode>();
        bool b_zero = (cb && *cb == 0) || (fb && fb->value() == 0);
        bool b_one = (cb && *cb == 1) || (fb && fb->value() == 1);
        auto ca = const_value(a);
        auto fa = a.as<FloatImmNode>();
        bool a_one = (ca && *ca == 1) || (fa && fa->value() == 1);
        if (k == ExprKind::kMul && b_one) return a;
        if (k == ExprKind::kMul && a_one) return b;
        if (k == ExprKind::kSub && b_zero) return a;  // x - 0 == x, also for -0.0 and NaN
        if (is_integer(t)) {
          if (k == ExprKind::kAdd && b_zero) return a;
          if (k == ExprKind::kAdd && ca && *ca == 0) return b;
          if (k == ExprKind::kMul && (b_zero || (ca && *ca == 0))) return make_zero(t);
          if (k == ExprKind::kSub && expr_equal(a, b)) return make_zero(t);
        }
      }
      return make_bin(k, a, b);
    case ExprKind::kDiv:
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: return div_mod(k, a, b);
    case ExprKind::kMin:
    case ExprKind::kMax: return min_max(k, a, b);
    case ExprKind::kAnd:
    case ExprKind::kOr: return logic(k, a, b);
    default: return compare(k, a, b);
  }
}

PrimExpr Simplifier::vector_bin(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  int lanes = a.dtype().lanes();
  auto* ba = a.as<BroadcastNode>();
  auto* bb = b.as<BroadcastNode>();
  auto* ra = a.as<RampNode>();
  auto* rb = b.as<RampNode>();
  if (ba && bb) return BroadcastNode::make(bin(k, ba->value(), bb->value()), lanes);
  if (k == ExprKind::kAnd || k == ExprKind::kOr) return logic(k, a, b);
  if (k == ExprKind::kAdd || k == ExprKind::kSub) {
    if (ra && rb) return make_ramp(bin(k, ra->base(), rb->base()), bin(k, ra->stride(), rb->stride()), lanes);
    if (ra && bb) return make_ramp(bin(k, ra->base(), bb->value()), ra->stride(), lanes);
    if (ba && rb) {
      PrimExpr stride = k == ExprKind::kAdd ? rb->stride() : bin(ExprKind::kSub, make_zero(rb->stride().dtype()), rb->stride());
      return make_ramp(bin(k, ba->value(), rb->base()), stride, lanes);
    }
  }
  if (k == ExprKind::kMul) {
    if (ra && bb) return make_ramp(bin(k, ra->base(), bb->value()), bin(k, ra->stride(), bb->value()), lanes);
    if (ba && rb) return make_ramp(bin(k, ba->value(), rb->base()), bin(k, ba->value(), rb->stride()), lanes);
  }
  if ((k == ExprKind::kFloorDiv || k == ExprKind::kFloorMod) && ra && bb && is_linear_type(ra->base().dtype())) {
    auto c = const_value(bb->value());
    auto s = const_value(ra->stride());
    if (c && *c > 0 && s && *s >= 0) {
      // base = c*Q + R; every lane's R + j*s within one block of c: the quotient is uniform.
      Linear L = to_linear(ra->base());
      Linear Q{L.t, {}, floordiv_i64(L.c, *c)}, R{L.t, {}, floormod_i64(L.c, *c)};
      for (const auto& term : L.terms) {
        if (term.k % *c == 0)
          add_term(&Q, term.e, term.k / *c);
        else
          add_term(&R, term.e, term.k);
      }
      ConstIntBound rb_ = bound(from_linear(R));
      if (finite(rb_) && rb_.max <= kPos / 2 && *s <= (kPos / 2) / lanes) {
        int64_t hi = rb_.max + *s * (lanes - 1);
        int64_t q = floordiv_i64(rb_.min, *c);
        if (q == floordiv_i64(hi, *c)) {
          if (k == ExprKind::kFloorDiv) {
            Q.c += q;
            return BroadcastNode::make(from_linear(Q), lanes);
          }
          R.c -= q * *c;
          return make_ramp(from_linear(R), ra->stride(), lanes);
        }
      }
    }
  }
  if (is_cmp(k) && k != ExprKind::kEQ && k != ExprKind::kNE) {
    // A ramp against a broadcast is monotonic in the lane: decided when both end lanes agree.
    const RampNode* r = ra ? ra : rb;
    const BroadcastNode* v = ra ? bb : ba;
    if (r && v && is_linear_type(r->base().dtype())) {
      ExprKind kk = ra ? k : flip(k);
      auto s = const_value(r->stride());
      if (s) {
        PrimExpr first = bin(kk, r->base(), v->value());
        PrimExpr last = bin(kk, bin(ExprKind::kAdd, r->base(), IntImmNode::make(r->base().dtype(), *s * (lanes - 1))),
                            v->value());
        auto f0 = const_value(first), f1 = const_value(last);
        if (f0 && f1 && *f0 == *f1) return make_const(bool_type(lanes), static_cast<double>(*f0));
      }
    }
  }
  return make_bin(k, a, b);
}

PrimExpr Simplifier::linear_arith(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  Linear L = to_linear(a);
  if (k == ExprKind::kAdd || k == ExprKind::kSub) {
    collect_linear(&L, b, k == ExprKind::kAdd ? 1 : -1);
  } else {
    Linear R = to_linear(b);
    auto parts = [](const Linear& X) {
      std::vector<LinearTerm> p = X.terms;
      if (X.c != 0) p.push_back({PrimExpr(), X.c});
      return p;
    };
    std::vector<LinearTerm> pa = parts(L), pb = parts(R);
    Linear out{t, {}, 0};
    if (pa.size() * pb.size() > 16) {
      add_term(&out, product(from_linear(L), from_linear(R)), 1);
    } else {
      for (const auto& x : pa) {
        for (const auto& y : pb) {
          int64_t kk = *wrap_int(t, static_cast<int64_t>(static_cast<uint64_t>(x.k) * static_cast<uint64_t>(y.k)));
          if (!x.e.defined() && !y.e.defined())
            add_term(&out, IntImmNode::make(t, 1), kk);
          else if (!x.e.defined())
            add_term(&out, y.e, kk);
          else if (!y.e.defined())
            add_term(&out, x.e, kk);
          else
            add_term(&out, product(x.e, y.e), kk);
        }
      }
    }
    L = std::move(out);
  }
  normalize_linear(&L);
  return from_linear(L);
}

PrimExpr Simplifier::div_mod(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (t.is_float()) {
    if (k == ExprKind::kDiv) {
      if (auto* f = b.as<FloatImmNode>(); f && f->value() == 1) return a;
    }
    return make_bin(k, a, b);
  }
  auto c = const_value(b);
  if (c && *c == 1) return k == ExprKind::kFloorMod ? make_zero(t) : a;
  if (is_linear_type(t) && c && *c > 0) {
    if (k == ExprKind::kFloorDiv) return floordiv_const(a, *c, false);
    if (k == ExprKind::kFloorMod) return floormod_const(a, *c);
    if (bound(a).min >= 0) return floordiv_const(a, *c, true);
    return make_bin(k, a, b);
  }
  // 0 <= a < b: the quotient is 0 and the remainder a (any rounding).
  if (is_integer(t) && bound(a).min >= 0 && bound(b).min > 0 && ana_.can_prove_less(a, b))
    return k == ExprKind::kFloorMod ? a : make_zero(t);
  return make_bin(k, a, b);
}

PrimExpr Simplifier::floordiv_const(const PrimExpr& a, int64_t c, bool trunc) {
  DataType t = a.dtype();
  PrimExpr cexpr = IntImmNode::make(t, c);
  if (auto* inner = a.as<FloorDivNode>()) {
    auto c1 = const_value(inner->b());
    if (c1 && *c1 > 0 && *c1 <= kPos / c) {
      auto merged = wrap_int(t, *c1 * c);
      if (merged && *merged == *c1 * c) return floordiv_const(inner->a(), *merged, false);
    }
  }
  Linear L = to_linear(a);
  Linear Q{t, {}, floordiv_i64(L.c, c)}, R{t, {}, floormod_i64(L.c, c)};
  for (const auto& term : L.terms) {
    if (term.k % c == 0)
      add_term(&Q, term.e, term.k / c);
    else
      add_term(&R, term.e, term.k);
  }
  PrimExpr r = from_linear(R);
  ConstIntBound rb = bound(r);
  if (finite(rb) && floordiv_i64(rb.min, c) == floordiv_i64(rb.max, c)) {
    Q.c += floordiv_i64(rb.min, c);
    normalize_linear(&Q);
    return from_linear(Q);
  }
  if (Q.terms.empty()) return make_bin(trunc ? ExprKind::kDiv : ExprKind::kFloorDiv, a, cexpr);
  add_term(&Q, (trunc && rb.min >= 0) ? DivNode::make(r, cexpr) : FloorDivNode::make(r, cexpr), 1);
  normalize_linear(&Q);
  return from_linear(Q);
}

PrimExpr Simplifier::floormod_const(const PrimExpr& a, int64_t c) {
  DataType t = a.dtype();
  PrimExpr cexpr = IntImmNode::make(t, c);
  if (auto* inner = a.as<FloorModNode>()) {
    auto c1 = const_value(inner->b());
    if (c1 && *c1 > 0 && *c1 % c == 0) return floormod_const(inner->a(), c);
  }
  Linear L = to_linear(a);
  Linear R{t, {}, floormod_i64(L.c, c)};
  for (const auto& term : L.terms)
    if (term.k % c != 0) add_term(&R, term.e, term.k);
  PrimExpr r = from_linear(R);
  ConstIntBound rb = bound(r);
  if (finite(rb) && floordiv_i64(rb.min, c) == floordiv_i64(rb.max, c)) {
    R.c -= floordiv_i64(rb.min, c) * c;
    return from_linear(R);
  }
  if (R.terms.size() == L.terms.size() && R.c == L.c) return make_bin(ExprKind::kFloorMod, a, cexpr);
  if (auto* inner = r.as<FloorModNode>()) {
    auto c1 = const_value(inner->b());
    if (c1 && *c1 > 0 && *c1 % c == 0) return floormod_const(inner->a(), c);
  }
  return FloorModNode::make(r, cexpr);
}

PrimExpr Simplifier::min_max(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  bool is_min = k == ExprKind::kMin;
  if (expr_equal(a, b)) return a;
  DataType t = a.dtype();
  if (!is_linear_type(t)) return make_bin(k, a, b);
  ConstIntBound d = refined_bound(bin(ExprKind::kSub, a, b));
  if (d.max <= 0) return is_min ? a : b;
  if (d.min >= 0) return is_min ? b : a;
  // floordiv(x, c) is monotone in x: compare the numerators.
  auto* fa = a.as<FloorDivNode>();
  auto* fb = b.as<FloorDivNode>();
  if (fa && fb && expr_equal(fa->b(), fb->b()) && const_value(fa->b()) && *const_value(fa->b()) > 0) {
    ConstIntBound dn = refined_bound(bin(ExprKind::kSub, fa->a(), fb->a()));
    if (dn.max <= 0) return is_min ? a : b;
    if (dn.min >= 0) return is_min ? b : a;
  }
  // Constants to the right; min(min(x, c1), c2) -> min(x, min(c1, c2)).
  if (const_value(a) && !const_value(b)) return min_max(k, b, a);
  if (auto cb = const_value(b)) {
    auto merge = [&](const PrimExpr& x, const PrimExpr& inner_b) -> PrimExpr {
      auto c1 = const_value(inner_b);
      if (!c1) return PrimExpr();
      int64_t c = is_min ? std::min(*c1, *cb) : std::max(*c1, *cb);
      return make_bin(k, x, IntImmNode::make(t, c));
    };
    if (is_min) {
      if (auto* m = a.as<MinNode>()) {
        if (PrimExpr r = merge(m->a(), m->b()); r.defined()) return r;
      }
    } else if (auto* m = a.as<MaxNode>()) {
      if (PrimExpr r = merge(m->a(), m->b()); r.defined()) return r;
    }
  }
  return make_bin(k, a, b);
}

PrimExpr Simplifier::compare(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  DataType t = a.dtype();
  if (expr_equal(a, b) && (is_integer(t) || t.is_bool()))
    return bool_imm(k == ExprKind::kEQ || k == ExprKind::kLE || k == ExprKind::kGE);
  if (!is_linear_type(t)) {
    if (is_integer(t) || t.is_bool()) {
      // Unsigned and bool: decide from bounds of both sides.
      ConstIntBound x = bound(a), y = bound(b);
      auto lt = [](ConstIntBound p, ConstIntBound q) { return p.max < q.min; };
      switch (k) {
        case ExprKind::kLT: if (lt(x, y)) return bool_imm(true); if (y.max <= x.min) return bool_imm(false); break;
        case ExprKind::kLE: if (x.max <= y.min) return bool_imm(true); if (lt(y, x)) return bool_imm(false); break;
        case ExprKind::kGT: if (lt(y, x)) return bool_imm(true); if (x.max <= y.min) return bool_imm(false); break;
        case ExprKind::kGE: if (y.max <= x.min) return bool_imm(true); if (lt(x, y)) return bool_imm(false); break;
        case ExprKind::kEQ: if (lt(x, y) || lt(y, x)) return bool_imm(false); break;
        case ExprKind::kNE: if (lt(x, y) || lt(y, x)) return bool_imm(true); break;
        default: break;
      }
    }
    return make_bin(k, a, b);
  }
  Linear d = to_linear(a);
  collect_linear(&d, b, -1);
  normalize_linear(&d);
  PrimExpr de = from_linear(d);
  if (auto res = decide(k, refined_bound(de))) return bool_imm(*res);
  // Positive terms on the left, the rest (and the constant) on the right.
  Linear left{t, {}, 0}, right{t, {}, 0};
  for (const auto& term : d.terms) {
    if (term.k > 0)
      add_term(&left, term.e, term.k);
    else
      add_term(&right, term.e, -term.k);
  }
  if (left.terms.empty())
    left.c = d.c;
  else
    right.c = -d.c;
  return make_bin(k, from_linear(left), from_linear(right));
}

PrimExpr Simplifier::logic(ExprKind k, const PrimExpr& a, const PrimExpr& b) {
  bool is_and = k == ExprKind::kAnd;
  auto ca = const_value(a), cb = const_value(b);
  if (ca) return (*ca != 0) == is_and ? b : a;
  if (cb) return (*cb != 0) == is_and ? a : b;
  if (expr_equal(a, b)) return a;
  auto* na = a.as<NotNode>();
  auto* nb = b.as<NotNode>();
  if ((na && expr_equal(na->a(), b)) || (nb && expr_equal(nb->a(), a))) return make_const(a.dtype(), is_and ? 0 : 1);
  return make_bin(k, a, b);
}

PrimExpr Simplifier::logic_not(const PrimExpr& a) {
  if (auto c = const_value(a)) return make_const(a.dtype(), *c != 0 ? 0 : 1);
  if (auto* n = a.as<NotNode>()) return n->a();
  if (auto* b = a.as<BroadcastNode>()) return BroadcastNode::make(logic_not(b->value()), b->lanes());
  auto flip_cmp = [&](ExprKind k, const PrimExpr& x, const PrimExpr& y) -> PrimExpr {
    if (!is_integer(x.dtype())) return PrimExpr();
    return bin(negate(k), x, y);
  };
  PrimExpr r;
  switch (a.kind()) {
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                                  \
  case ExprKind::k##Name:                                                             \
    if (is_cmp(ExprKind::k##Name))                                                    \
      r = flip_cmp(ExprKind::k##Name, a.as<Name##Node>()->a(), a.as<Name##Node>()->b()); \
    break;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    default: break;
  }
  return r.defined() ? r : NotNode::make(a);
}

PrimExpr Simplifier::mutate_(const SelectNode* op) {
  PrimExpr c = mutate_expr(op->cond());
  PrimExpr t = mutate_expr(op->true_value()), f = mutate_expr(op->false_value());
  if (auto v = const_value(c)) return *v ? t : f;
  if (expr_equal(t, f)) return t;
  return keep(op, SelectNode::make(c, t, f));
}

PrimExpr Simplifier::mutate_(const CastNode* op) {
  PrimExpr v = mutate_expr(op->value());
  DataType t = op->dtype();
  if (v.dtype() == t) return v;
  if (PrimExpr f = fold_cast(t, v); f.defined()) return f;
  if (auto* b = v.as<BroadcastNode>()) {
    PrimExpr inner = CastNode::make(element_of(t), b->value());
    if (PrimExpr f = fold_cast(element_of(t), b->value()); f.defined()) inner = f;
    return BroadcastNode::make(inner, b->lanes());
  }
  return keep(op, CastNode::make(t, v));
}

PrimExpr Simplifier::mutate_(const LetNode* op) {
  PrimExpr value = mutate_expr(op->value());
  if (value.as<IntImmNode>() || value.as<FloatImmNode>() || value.as<VarNode>()) {
    VarMap map{{op->var(), value}};
    return mutate_expr(substitute(op->body(), map));
  }
  Analyzer inner = ana_;
  auto scope = inner.bind_value(op->var(), value);
  PrimExpr body = Simplifier(inner).mutate_expr(op->body());
  return keep(op, LetNode::make(op->var(), value, body));
}

thread_local int g_symbolic_depth = 0;

}  // namespace

PrimExpr simplify(const PrimExpr& e, const Analyzer& analyzer) {
  if (!e.defined()) return e;
  return Simplifier(analyzer).mutate_expr(e);
}

PrimExpr simplify(const PrimExpr& e) { return simplify(e, Analyzer()); }

PrimExpr Analyzer::simplify(const PrimExpr& e) const { return arith::simplify(e, *this); }

PrimExpr Analyzer::symbolic_bound(const PrimExpr& e, bool upper, int rounds) const {
  if (!e.defined() || !is_linear_type(e.dtype()) || g_symbolic_depth >= 3) return PrimExpr();
  ++g_symbolic_depth;
  struct Guard {
    ~Guard() { --g_symbolic_depth; }
  } guard;
  PrimExpr cur = e;
  bool any = false;
  for (int round = 0; round < rounds; ++round) {
    Linear L = to_linear(cur);
    Linear out{L.t, {}, L.c};
    bool changed = false;
    for (const auto& term : L.terms) {
      auto* v = term.e.as<VarNode>();
      const VarInfo* info = v ? lookup(Var(v)) : nullptr;
      if (info && info->min.defined() && info->extent.defined() && info->min.dtype() == term.e.dtype() &&
          info->extent.dtype() == term.e.dtype()) {
        bool use_max = (term.k > 0) == upper;
        PrimExpr rep = use_max ? AddNode::make(info->min, SubNode::make(info->extent, IntImmNode::make(L.t, 1)))
                               : info->min;
        collect_linear(&out, arith::simplify(rep, *this), term.k);
        changed = true;
      } else {
        add_term(&out, term.e, term.k);
      }
    }
    if (!changed) break;
    any = true;
    cur = arith::simplify(from_linear(out), *this);
  }
  return any ? cur : PrimExpr();
}

}  // namespace anvil::arith
