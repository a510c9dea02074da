// unroll: loops of kind `unrolled` with a constant extent become one copy of the body per
// iteration (loop var := min + k, each copy simplified). An `unrolled` loop whose extent is not
// constant becomes a serial loop (still correct, just not unrolled). With max_step > 0, serial
// loops of constant extent whose fully unrolled size (extent x statements of the body, counting
// inner constant loops) is at most max_step are unrolled too, innermost first; loops holding a
// loop of non-constant extent, an allocation, or thread-bound/parallel/vectorized loops are left
// alone. f itself when unchanged.
#pragma once

#include "anvil/tir/prim_func.h"

namespace anvil::tir::passes {

struct UnrollOptions {
  int max_step = 0;  // 0: only loops marked unrolled
};

PrimFunc unroll(const PrimFunc& f, const UnrollOptions& options = {});
Stmt unroll(const Stmt& s, const UnrollOptions& options = {});

}  // namespace anvil::tir::passes
