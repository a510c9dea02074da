// The text form of graph functions and IRModules — what --dump-ir writes, what pass tests
// compare, and what parser.h reads back:
//
//   def @main(%x: Tensor[(n, 4), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(n, 8), float32] {
//     %y: Tensor[(n, 8), float32] = matmul(%x, %w)
//     %z: Tensor[(n, 8), float32] = nn.softmax(%y, axis=-1)
//     return %z
//   }
//
// Names are the Vars' own, made unique with a suffix on a clash (%x_1). Constants print as
// `const[i]`, indices into the constant list that follows the functions:
//   const[0]: Tensor[(2,), float32] = [0.5, -1.25]
//   const[1]: Tensor[(64, 3, 7, 7), float32] = <9408 values, fnv1a 0x8c3b...>
// (values in full up to PrintOptions::max_constant_values elements; the elided form is for
// reading and does not parse back). PrimFuncs print with the tensor IR's printer after them.
#pragma once

#include <cstdint>
#include <string>

#include "anvil/graph/function.h"

namespace anvil::graph {

struct PrintOptions {
  // Constants with more elements print as `<N values, fnv1a 0x...>`; -1: every value.
  int64_t max_constant_values = 16;
  bool print_prim_funcs = true;
};

std::string to_string(const IRModule& mod, const PrintOptions& options = {});
std::string to_string(const Function& f, const std::string& name = "main", const PrintOptions& options = {});
std::string to_string(const Expr& e);  // one expression, for messages

}  // namespace anvil::graph
