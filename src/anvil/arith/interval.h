// Symbolic interval arithmetic for bound inference (TE lowering): small constant-folding builders
// (so that inferred extents read "4", not "3 - 0 + 1") and interval evaluation of integer index
// expressions whose ends are expressions. Its constant-interval counterpart is
// Analyzer::const_int_bound (analyzer.h); interval_test.cc checks that the two agree, and both
// take floor division from base/int_math.h. The general simplifier is simplify.h.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "anvil/ir/expr.h"

namespace anvil::arith {

using ir::PrimExpr;

// a + b, a - b, ... folding integer constants and the identities x + 0, x * 1, x * 0, x // 1.
PrimExpr fold_add(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_sub(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_mul(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_floordiv(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_floormod(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_min(const PrimExpr& a, const PrimExpr& b);
PrimExpr fold_max(const PrimExpr& a, const PrimExpr& b);
// ceil(a / b) for b > 0.
PrimExpr fold_ceildiv(const PrimExpr& a, const PrimExpr& b);

// An inclusive integer interval [lo, hi] of expressions.
struct Interval {
  PrimExpr lo, hi;
  bool is_point() const { return lo.same_as(hi); }
};

// How variables behave in interval evaluation: kept (a point: the variable itself), or relaxed
// over [0, extent - 1] where extent may mention other variables (relaxed in turn). Variables
// the callback does not know are kept.
struct RelaxSpec {
  std::unordered_set<const ir::VarNode*> keep;
  std::unordered_map<const ir::VarNode*, PrimExpr> extent;  // loop vars: range [0, extent)
};

// The interval e takes when the spec's relaxed variables range over their loops; nullopt when e
// is not an index expression this understands (a load depending on relaxed variables, ...).
std::optional<Interval> eval_interval(const PrimExpr& e, const RelaxSpec& spec);

}  // namespace anvil::arith
