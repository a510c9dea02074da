// select_to_if: a store of select(c, a, b) whose condition bounds an enclosing loop var becomes
// `if c: store a  else: store b`, the conjuncts of c as nested ifs, so that loop_partition
// (which splits loops at ifs, not at selects) can peel the part of the loop where c is decided:
//
//   for x in range(0, 114):                       for x in range(0, 1):     P[x] = 0
//     P[x] = select(x >= 1 and x < 113,     ->    for x in range(1, 113):   P[x] = A[x - 1]
//                   A[min(max(x - 1, 0), 111)],   for x in range(113, 114): P[x] = 0
//                   0)                            (after loop_partition and simplify)
//
// A zero-padding copy then has a middle without clamps or selects: one contiguous copy, where
// the select form was a gather per element. A select also evaluates both sides; the ifs
// evaluate one, so the rewrite is always safe. Only stores whose enclosing loops are serial or
// parallel (not vectorized, unrolled or thread-bound) and whose condition has a conjunct that is
// an inequality over the innermost loop's var and reads no memory are rewritten; others are
// left as they are.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

PrimFunc select_to_if(const PrimFunc& f);
Stmt select_to_if(const Stmt& s);

}  // namespace anvil::tir::passes
