// simplify: the arithmetic simplifier (arith/simplify.h) applied to every expression of a
// function, with what the enclosing statements tell: loop vars in [min, min + extent), let
// values, and if conditions (assumed in the then branch, their negation in the else branch).
// Also drops ifs whose condition is proved true/false, removes loops of extent 0 (and of a
// constant extent <= 0) and replaces loops of extent 1 by their body with the loop var := min
// (thread-bound loops are kept), and inlines lets of constants and vars. Buffer shapes are left
// as they are; the variables of parameter buffer shapes are known to be >= 0 (tensor extents).
// Returns f itself when nothing changed.
#pragma once

#include "anvil/arith/analyzer.h"
#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

PrimFunc simplify(const PrimFunc& f);
// The statement version: `analyzer` carries knowledge from the context (it is restored on return).
Stmt simplify(const Stmt& s, arith::Analyzer* analyzer);

}  // namespace anvil::tir::passes
