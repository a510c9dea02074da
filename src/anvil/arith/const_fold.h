// Exact scalar semantics of the IR's operators on constants, per dtype: integer wrap-around at
// the dtype's width, truncating Div/Mod (C), floordiv/floormod rounding toward -inf, float
// results rounded to the dtype's precision (float16/bfloat16/float32/float64), casts. Used by
// the simplifier's constant folding; kept separate so the rules are testable on their own.
// Every function returns nullopt when the result must not be folded (division by zero, a value
// not representable as an immediate, undefined behaviour in C such as float->int overflow).
#pragma once

#include <cstdint>
#include <optional>

#include "anvil/base/int_math.h"
#include "anvil/ir/expr.h"

namespace anvil::arith {

// The integer value v wrapped to t's width and signedness (t int/uint/bool, scalar).
// nullopt for a uint64 value that does not fit int64 storage.
std::optional<int64_t> wrap_int(ir::DataType t, int64_t v);
// v rounded to the precision and range of float type t (round to nearest even; overflow to inf).
double round_float(ir::DataType t, double v);

// floor division and modulo on int64 (b != 0): floordiv(-7, 2) = -4, floormod(-7, 2) = 1;
// kMin // -1 wraps. Defined once in base/int_math.h.
using anvil::floordiv_i64;
using anvil::floormod_i64;

// a OP b for two immediates of one scalar dtype (kind one of the binary ExprKinds). The result
// is an immediate (bool for comparisons), or undefined when it is not folded.
ir::PrimExpr fold_binary(ir::ExprKind kind, const ir::PrimExpr& a, const ir::PrimExpr& b);
// Cast of an immediate to scalar dtype t; undefined when not folded.
ir::PrimExpr fold_cast(ir::DataType t, const ir::PrimExpr& value);
// An intrinsic applied to immediates; undefined when not folded.
ir::PrimExpr fold_call(ir::CallOp op, const std::vector<ir::PrimExpr>& args);

}  // namespace anvil::arith
