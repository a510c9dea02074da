// Arithmetic analysis of integer index expressions: what is known about variables (ranges of
// loop vars, let values, branch conditions), constant integer bounds, the simplifier entry point
// and provers. Passes keep one Analyzer, bind loop vars on the way down and ask it questions:
//
//   arith::Analyzer ana;
//   auto scope = ana.bind(i, 0, n);                  // i in [0, n) for the life of `scope`
//   ana.can_prove(i < n);                             // true (symbolic range)
//   ana.simplify(floordiv(i * 8 + 3, 8));             // floordiv(i*8+3, 8) -> i
//   ana.const_int_bound(floormod(i, 4));              // [0, 3]
//
// Semantics assumed: integer index arithmetic does not overflow its dtype (as in TVM); constant
// folding itself wraps exactly like the dtype. Nothing here throws for unknown expressions —
// an unknown is simply "not proved" / the full range of the dtype.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/ir/expr.h"

namespace anvil::arith {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

// An inclusive integer interval [min, max]; kNegInf / kPosInf stand for unbounded ends.
struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  int64_t min = kNegInf;
  int64_t max = kPosInf;

  static ConstIntBound everything() { return {}; }
  static ConstIntBound point(int64_t v) { return {v, v}; }
  // The full value range of an integer/bool dtype (unbounded for floats and others).
  static ConstIntBound of_dtype(DataType t);
  bool is_const() const { return min == max && min != kNegInf && min != kPosInf; }
  bool contains(int64_t v) const { return min <= v && v <= max; }
  std::string to_string() const;  // "[0, 3]", "[-inf, 7]"
};

class Analyzer;

// What the analyzer knows about one variable: v in [min, min + extent) (symbolic expressions,
// either may be undefined) and the constant bound derived from them (and from constraints).
struct VarInfo {
  PrimExpr min, extent;  // symbolic range; undefined when only a constant bound is known
  ConstIntBound bound;
};

// Restores a variable's previous knowledge when it goes out of scope (returned by bind()).
class [[nodiscard]] BindScope {
 public:
  BindScope() = default;
  BindScope(Analyzer* ana, std::vector<std::pair<Var, std::optional<VarInfo>>> saved)
      : ana_(ana), saved_(std::move(saved)) {}
  BindScope(BindScope&& o) noexcept : ana_(o.ana_), saved_(std::move(o.saved_)) { o.ana_ = nullptr; }
  BindScope& operator=(BindScope&& o) noexcept;
  BindScope(const BindScope&) = delete;
  BindScope& operator=(const BindScope&) = delete;
  ~BindScope() { restore(); }
  void restore();

 private:
  Analyzer* ana_ = nullptr;
  std::vector<std::pair<Var, std::optional<VarInfo>>> saved_;
};

class Analyzer {
 public:
  // v in [min, min + extent) (a loop var). The constant bound is derived from min and extent.
  BindScope bind(const Var& v, const PrimExpr& min, const PrimExpr& extent);
  // v has exactly this constant bound.
  BindScope bind(const Var& v, ConstIntBound bound);
  // v == value (a let var): symbolic range [value, value + 1), bound of value.
  BindScope bind_value(const Var& v, const PrimExpr& value);
  // Assume cond holds (an enclosing if): tightens bounds of vars in conjuncts of the forms
  // v < e, v <= e, v > e, v >= e, v == e (either side) where e has a constant bound.
  BindScope assume(const PrimExpr& cond);

  // What is known about v (nullopt: nothing).
  const VarInfo* lookup(const Var& v) const;

  // [min, max] of an integer (or bool) expression under the bindings; for vectors the bound
  // over all lanes. Floats and unknowns give the dtype range.
  ConstIntBound const_int_bound(const PrimExpr& e) const;
  // The simplified expression (see simplify.h for the rules).
  PrimExpr simplify(const PrimExpr& e) const;

  // Provers: true only when the fact holds for every value of the bound vars; false means "not
  // proved" (it may still hold).
  bool can_prove(const PrimExpr& cond) const;
  bool can_prove_less(const PrimExpr& a, const PrimExpr& b) const;           // a < b
  bool can_prove_less_equal(const PrimExpr& a, const PrimExpr& b) const;     // a <= b
  bool can_prove_greater_equal(const PrimExpr& a, const PrimExpr& b) const;  // a >= b
  bool can_prove_equal(const PrimExpr& a, const PrimExpr& b) const;          // a == b

  // Symbolic extreme of a scalar integer expression: every var with a symbolic range in a linear
  // term is replaced by its max (positive coefficient) or min (negative), `rounds` times, and the
  // result simplified. Upper bound when upper, else lower. Undefined when nothing could be done.
  PrimExpr symbolic_bound(const PrimExpr& e, bool upper, int rounds = 2) const;

 private:
  friend class BindScope;
  BindScope set(const Var& v, VarInfo info);
  std::unordered_map<const ir::VarNode*, std::pair<Var, VarInfo>> vars_;
};

}  // namespace anvil::arith
