// The expression simplifier. simplify(e, analyzer) returns an equivalent expression (the same
// node when nothing changed), using what the analyzer knows about variables:
//
//  * constant folding of every operator on immediates of every dtype (const_fold.h): integer
//    wrap-around, truncating Div, floordiv/floormod toward -inf, float rounding to the dtype;
//    division by a constant zero is left alone;
//  * signed integer scalars are put in a canonical linear form: a sum of coefficient * term plus a
//    constant with like terms collected ((i*4 + j) - i*4 -> j, x*2 + x -> x*3), products of sums
//    distributed, positive terms first, the constant last; c*floordiv(X, c) + ... + -X-style
//    pairs fuse into floormod (and back) when that leaves fewer terms;
//  * div/mod by a positive constant c: floordiv(x*c + y, c) -> x + floordiv(y, c) always, -> x when
//    0 <= y < c is proved; floormod(x*c + y, c) -> floormod(y, c) (-> y when proved in range);
//    nested floordiv/floormod merge; truncating Div only when the dividend is proved >= 0;
//  * min/max/select/comparisons decided from bounds, including symbolic loop ranges
//    (min(x, x+1) -> x; i < n with i in [0, n) -> True); comparisons keep positive terms on the
//    left (x + 1 < 5 -> x < 4);
//  * boolean identities (and/or/not with constants, x and not x, not (a < b) -> a >= b on ints);
//  * vectors: broadcast(a) op broadcast(b) -> broadcast(a op b), ramp arithmetic, ramp with
//    stride 0 -> broadcast, floordiv/floormod of ramps that stay in one block, lane-uniform
//    comparisons of ramps;
//  * casts of constants and of broadcasts, identity casts; lets of constants/vars inlined.
// Float arithmetic is only folded (no reassociation). Index arithmetic is assumed not to
// overflow (as in TVM); folding of constants itself is exact.
#pragma once

#include "anvil/arith/analyzer.h"

namespace anvil::arith {

PrimExpr simplify(const PrimExpr& e, const Analyzer& analyzer);
PrimExpr simplify(const PrimExpr& e);

}  // namespace anvil::arith
