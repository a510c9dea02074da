// loop_partition: splits a loop at the point where a condition inside it stops (or starts)
// holding, so that one part runs without the condition. The typical case is the tail of a
// non-dividing split:
//
//   for io in range(0, (n + 3) // 4):          for io in range(0, n // 4):
//     for ii in range(0, 4):                      for ii in range(0, 4):        <- no condition:
//       if io * 4 + ii < n:             ->          B[io * 4 + ii] = ...           vectorizable
//         B[io * 4 + ii] = ...                  for io in range(n // 4, (n + 3) // 4):
//                                                 for ii in range(0, 4):
//                                                   if io * 4 + ii < n: ...
//
// A condition qualifies when, after simplification, it is an inequality (<, <=, >, >=) linear
// in the loop var v with the rest bounded over the loops between v and the if (their ranges are
// substituted) and invariant otherwise; works with symbolic extents. The split point is
// clamped to the loop's range, so the result is correct for every n. Each if is used once; the
// part that keeps it is not partitioned again. Thread-bound loops are left alone.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

PrimFunc loop_partition(const PrimFunc& f);
Stmt loop_partition(const Stmt& s);

}  // namespace anvil::tir::passes
