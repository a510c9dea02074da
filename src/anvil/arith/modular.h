// Modular-set analysis of integer index expressions: every value of e is coeff * k + base for
// some integer k (coeff 0: e is exactly base). The code generators use it for the alignment of
// vector loads and stores (a Ramp base of 16 * i + 32 on a 64-byte aligned float buffer is 64-byte
// aligned), as TVM's ModularSet.
//
//   modular_set(i * 16 + 4)                 // 16k + 4
//   modular_set(floordiv(i * 16 + 4, 2))    // 8k + 2
//   modular_set(floormod(i * 6, 4))         // 2k + 0
//   modular_set(min(i * 8, j * 12 + 4))     // 4k + 0
//
// Rules: immediates are exact; + - * combine sets; floordiv / floormod by a positive constant are
// exact when the divisor divides coeff (otherwise floormod keeps the residue modulo
// gcd(coeff, divisor), floordiv gives up); min / max / select unite their operands; casts between
// integer types keep the set; let binds its var. Vars are looked up in `vars` (e.g. let values of
// the enclosing statements); unknown vars and everything else (truncating Div / Mod, loads,
// calls, non-integer or vector expressions) give "every integer" (1k + 0). As in the Analyzer,
// index arithmetic is assumed not to overflow its dtype. Never throws.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

#include "anvil/ir/expr.h"

namespace anvil::arith {

struct ModularSet {
  int64_t coeff = 1;  // >= 0; 0 means the value is exactly base
  int64_t base = 0;   // in [0, coeff) when coeff > 0

  static ModularSet everything() { return {1, 0}; }
  static ModularSet exactly(int64_t v) { return {0, v}; }
  // coeff * k + base with coeff made non-negative and base reduced into [0, coeff).
  static ModularSet make(int64_t coeff, int64_t base);
  bool operator==(const ModularSet&) const = default;
  std::string to_string() const;  // "16k+4", "5"
};

using ModularVarMap = std::unordered_map<const ir::VarNode*, ModularSet>;

ModularSet modular_set(const ir::PrimExpr& e, const ModularVarMap& vars = {});

// The largest power of two, at most cap (a power of two), dividing every value of m (for
// coeff 0 and base 0, every power of two does: cap).
int64_t power_of_two_factor(const ModularSet& m, int64_t cap);

}  // namespace anvil::arith
