// vectorize: loops of kind `vectorized` with a constant extent L become straight-line vector
// code: the loop var turns into ramp(min, 1, L), expressions that depend on it into vector
// expressions of L lanes (scalars meeting vectors are broadcast), loads/stores with such indices
// into vector loads/stores with real vector dtypes (float32x4, ...). Lets whose value depends on
// the loop var get a vector var. Results are simplified (ramp/broadcast folding).
// Any L >= 2 works (non-power-of-two lane counts too); L == 1 just drops the loop.
// When the body cannot be vectorized — an inner loop, an allocation, an if whose condition
// depends on the loop var, a store of a vector value through scalar indices (a reduction), a
// vector already in the body — or the extent is not constant, the loop becomes a serial loop:
// correct, just not vector. Assumes, as TVM does, that a loop marked vectorized carries no
// dependence between iterations. f itself when unchanged.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

PrimFunc vectorize(const PrimFunc& f);
Stmt vectorize(const Stmt& s);

}  // namespace anvil::tir::passes
