// A structural total order on expressions, used by the simplifier to collect like terms and to
// put commutative operands in a canonical order. Two expressions compare equal (0) when they
// have the same tree: same kinds, dtypes, constants, the same Var and Buffer nodes (identity).
// The order is deterministic across runs (vars and buffers order by name first).
#pragma once

#include "anvil/ir/expr.h"

namespace anvil::arith {

// <0, 0, >0 like strcmp.
int compare_expr(const ir::PrimExpr& a, const ir::PrimExpr& b);
inline bool expr_equal(const ir::PrimExpr& a, const ir::PrimExpr& b) { return compare_expr(a, b) == 0; }

}  // namespace anvil::arith
