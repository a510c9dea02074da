// The float32 vector width of a CPU target, for the x86 schedules (matmul, conv2d) that size
// their register tiles by it.
#pragma once

#include "anvil/target/target.h"

namespace anvil::ops {

// float32 lanes of the widest vector registers of an "llvm" target: 16 with AVX-512F, 8 with
// AVX2, 4 otherwise. -mcpu names a CPU (x86-64-v4, haswell, znver4, ...); -mattr=+f/-f entries
// override it, later entries winning (-mattr=-avx512f on an AVX-512 CPU gives 8). With no
// -mtriple and -mcpu absent or "native", the running CPU's features decide.
int vector_lanes_of(const Target& target);

}  // namespace anvil::ops
