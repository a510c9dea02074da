// Modular-set analysis; see modular.h.
#include "anvil/arith/modular.h"

#include <bit>
#include <numeric>

#include "anvil/base/int_math.h"

namespace anvil::arith {

using namespace ir;

namespace {

using i128 = __int128;

bool fits(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }

i128 floormod128(i128 a, i128 b) { return floor_mod(a, b); }  // base/int_math.h
i128 floordiv128(i128 a, i128 b) { return floor_div(a, b); }

i128 gcd128(i128 a, i128 b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    i128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// coeff * k + base from 128-bit parts; "everything" when they do not fit.
ModularSet make128(i128 coeff, i128 base) {
  if (coeff < 0) coeff = -coeff;
  if (coeff != 0) base = floormod128(base, coeff);
  if (!fits(coeff) || !fits(base)) return ModularSet::everything();
  return {static_cast<int64_t>(coeff), static_cast<int64_t>(base)};
}

// The smallest set holding both.
ModularSet unite(const ModularSet& a, const ModularSet& b) {
  i128 c = gcd128(gcd128(a.coeff, b.coeff), static_cast<i128>(a.base) - b.base);
  return make128(c, a.base);
}

class ModularAnalyzer {
 public:
  explicit ModularAnalyzer(const ModularVarMap& vars) : vars_(vars) {}

  ModularSet visit(const PrimExpr& e) {
    if (!e.defined()) return ModularSet::everything();
    DataType t = e.dtype();
    if (t.lanes() != 1 || !is_integer(t)) return ModularSet::everything();
    switch (e.kind()) {
      case ExprKind::kIntImm: return ModularSet::exactly(e.as<IntImmNode>()->value());
      case ExprKind::kVar: {
        auto it = vars_.find(e.as<VarNode>());
        return it == vars_.end() ? ModularSet::everything() : it->second;
      }
      case ExprKind::kAdd: {
        auto* op = e.as<AddNode>();
        ModularSet a = visit(op->a()), b = visit(op->b());
        return make128(gcd128(a.coeff, b.coeff), static_cast<i128>(a.base) + b.base);
      }
      case ExprKind::kSub: {
        auto* op = e.as<SubNode>();
        ModularSet a = visit(op->a()), b = visit(op->b());
        return make128(gcd128(a.coeff, b.coeff), static_cast<i128>(a.base) - b.base);
      }
      case ExprKind::kMul: {
        // (ca k + ba)(cb l + bb) = ca cb kl + ca bb k + cb ba l + ba bb
        auto* op = e.as<MulNode>();
        ModularSet a = visit(op->a()), b = visit(op->b());
        i128 ca = a.coeff, cb = b.coeff, ba = a.base, bb = b.base;
        if (!fits(ca * cb) || !fits(ca * bb) || !fits(cb * ba)) return ModularSet::everything();
        return make128(gcd128(gcd128(ca * cb, ca * bb), cb * ba), ba * bb);
      }
      case ExprKind::kFloorDiv: {
        auto* op = e.as<FloorDivNode>();
        auto d = as_const_int(op->b());
        if (!d || *d <= 0) return ModularSet::everything();
        ModularSet a = visit(op->a());
        // a = d m k + base  ->  floordiv(a, d) = m k + floordiv(base, d)
        if (a.coeff % *d != 0) return ModularSet::everything();
        return make128(a.coeff / *d, floordiv128(a.base, *d));
      }
      case ExprKind::kFloorMod: {
        auto* op = e.as<FloorModNode>();
        auto d = as_const_int(op->b());
        if (!d || *d <= 0) return ModularSet::everything();
        ModularSet a = visit(op->a());
        if (a.coeff % *d == 0) return ModularSet::exactly(static_cast<int64_t>(floormod128(a.base, *d)));
        // floormod(a, d) = a - d q keeps the residue modulo anything dividing d and coeff.
        return make128(gcd128(a.coeff, *d), a.base);
      }
      case ExprKind::kMin: {
        auto* op = e.as<MinNode>();
        return unite(visit(op->a()), visit(op->b()));
      }
      case ExprKind::kMax: {
        auto* op = e.as<MaxNode>();
        return unite(visit(op->a()), visit(op->b()));
      }
      case ExprKind::kSelect: {
        auto* op = e.as<SelectNode>();
        return unite(visit(op->true_value()), visit(op->false_value()));
      }
      case ExprKind::kCast: {
        const PrimExpr& v = e.as<CastNode>()->value();
        return is_integer(v.dtype()) ? visit(v) : ModularSet::everything();
      }
      case ExprKind::kLet: {
        auto* op = e.as<LetNode>();
        ModularSet value = visit(op->value());
        ModularVarMap inner = vars_;
        inner[op->var().get()] = value;
        return ModularAnalyzer(inner).visit(op->body());
      }
      default: return ModularSet::everything();
    }
  }

 private:
  const ModularVarMap& vars_;
};

}  // namespace

ModularSet ModularSet::make(int64_t coeff, int64_t base) { return make128(coeff, base); }

std::string ModularSet::to_string() const {
  if (coeff == 0) return std::to_string(base);
  return std::to_string(coeff) + "k+" + std::to_string(base);
}

ModularSet modular_set(const PrimExpr& e, const ModularVarMap& vars) { return ModularAnalyzer(vars).visit(e); }

int64_t power_of_two_factor(const ModularSet& m, int64_t cap) {
  auto low_bit = [](int64_t v) {
    uint64_t u = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    return u & (0 - u);  // v != 0
  };
  uint64_t r = static_cast<uint64_t>(cap);
  if (m.coeff != 0) r = std::min(r, low_bit(m.coeff));
  if (m.base != 0) r = std::min(r, low_bit(m.base));
  return static_cast<int64_t>(r);
}

}  // namespace anvil::arith
