// Internal to arith: the linear form of a signed integer scalar expression, sum(k_i * term_i) + c,
// with coefficients wrapped to the dtype (exact modulo 2^bits). Used by the simplifier and the
// analyzer's symbolic bounds.
#pragma once

#include <vector>

#include "anvil/ir/expr.h"

namespace anvil::arith {

struct LinearTerm {
  ir::PrimExpr e;  // never an immediate
  int64_t k;
};

struct Linear {
  ir::DataType t;
  std::vector<LinearTerm> terms;  // in order of first appearance
  int64_t c = 0;
};

// Whether dtype gets the linear treatment (scalar signed int).
bool is_linear_type(ir::DataType t);
// Decomposes e through Add, Sub and Mul by immediates (k * e is added to L).
void collect_linear(Linear* L, const ir::PrimExpr& e, int64_t k);
Linear to_linear(const ir::PrimExpr& e);
// Adds k * e as a single term (immediates go to the constant).
void add_term(Linear* L, const ir::PrimExpr& e, int64_t k);
// Positive terms first, then negative ones, then the constant.
ir::PrimExpr from_linear(const Linear& L);
// Fuses c*floordiv(X, c) with -X (-> -floormod(X, c)) and k*floormod(X, c) with k*c*floordiv(X, c)
// (-> k*X) when that leaves fewer terms.
void normalize_linear(Linear* L);

}  // namespace anvil::arith
