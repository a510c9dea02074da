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
// `const[i]` indices into the module's constant list, which follows the functions as
// `constants { const[0]: Tensor[(4, 8), float32] = <bytes in hex or values> }` (values
// printed in full so the text parses back to the same module). PrimFuncs print with the
// tensor IR's printer after the graph functions.
#pragma once

#include <string>

#include "anvil/graph/function.h"

namespace anvil::graph {

struct PrintOptions {
  // Constants with more elements than this print as `<N elements, sha 0x...>`: the text is
  // then for reading, not for parsing back. 0: print every value.
  size_t max_constant_elements = 0;
};

std::string to_string(const IRModule& mod, const PrintOptions& options = {});
std::string to_string(const Function& f, const std::string& name = "main", const PrintOptions& options = {});
std::string to_string(const Expr& e);  // one expression, for messages

}  // namespace anvil::graph
