// remove_no_op: dead code removal.
//  * evaluate(c) of a constant or a var, loops whose body does nothing, loops of constant extent
//    <= 0, ifs whose branches both do nothing (an empty then with an else becomes `if not c`),
//    lets/attrs/allocations around nothing, no-ops inside sequences;
//  * allocations that are never read (no load of the allocated data var): the allocation and
//    every store into it are removed (an Allocate is private to its body, so nobody else can see
//    them).
// The function returns a body of evaluate(0) when nothing is left. f itself when unchanged.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

PrimFunc remove_no_op(const PrimFunc& f);
Stmt remove_no_op(const Stmt& s);

}  // namespace anvil::tir::passes
