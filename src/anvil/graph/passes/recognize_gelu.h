// recognize_gelu: GELU spelled out in elementwise ops, as torch.onnx exports it, rewritten as one
// `gelu` call:
//   exact:  x * 0.5 * (1 + erf(x / sqrt(2)))                          -> gelu(x)
//           (x / sqrt(2) also as x * (1 / sqrt(2)); the 0.5 on either product)
//   tanh:   0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))  -> gelu(x, approximate="tanh")
//           (x^3 as power(x, 3) or x * x * x)
// Commutative operands in either order; scalar float32 constants within 1e-6 (relative) of the
// values above; every intermediate feeding only the next step. f itself when nothing matched.
// Fusion would merge the spelled-out form into one kernel anyway; the single op keeps graphs
// readable and gives the kernel one well-rounded formula.
#pragma once

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

IRModule recognize_gelu(const IRModule& mod);
Function recognize_gelu(const Function& f);

}  // namespace anvil::graph::passes
