// The float32 vector width of a CPU target, for the x86 schedules (matmul, conv2d) that size
// their register tiles by it.
#pragma once

#include "anvil/target/target.h"

namespace anvil::ops {

// float32 lanes of the widest vector registers of an "llvm" target: 16 with AVX-512F, 8 with
// AVX2, 4 otherwise (and for targets that are not x86). -mcpu names a CPU (x86-64-v4, haswell,
// znver4, ...) whose features are LLVM's; -mattr=+f/-f entries change them as LLVM does, later
// entries winning, implied features following (-mattr=-avx512f on an AVX-512 CPU gives 8,
// -mattr=-avx2 gives 4). With -mcpu absent or "native" and no -mtriple or one of the host's
// architecture, the host's features (LLVM's host detection) decide, as in the code generator.
int vector_lanes_of(const Target& target);

}  // namespace anvil::ops
