// Parser of the graph IR text that printer.h writes, so that pass tests are text in, text out:
//
//   IRModule m = parse_module(R"(
//     def @main(%x: Tensor[(n, 4), float32]) -> Tensor[(n, 4), float32] {
//       %y: Tensor[(n, 4), float32] = relu(%x)
//       return %y
//     }
//   )");
//   to_string(m) == the same text, re-printed
//
// Calls are rebuilt through the operator table (infer_call_type), and each printed type is
// checked against the inferred one: a binding `%v: T = op(...)` whose op infers another type is
// a ValueError naming the line (the text describes IR the builder would not make). Dimension
// expressions use + - * // %, parentheses, min/max/truncdiv, integer casts and (for symbolic
// clamping) select(c, a, b) over comparisons, and/or/not; a name is one
// ir::size_var across the whole module. Constants are read from the `const[i]: Type = [...]`
// list after the functions (all values written out: the elided `<N values, fnv1a ...>` form of
// large constants does not parse back; print with max_constant_values = -1). `#` starts a
// comment. PrimFuncs (the tensor IR after the functions) are not parsed: a `call_tir` binding
// takes its printed type, and the module has no PrimFuncs.
//
// Failure: ValueError "graph parse: line L:C: expected <what>, got '<text>'"; errors of type
// inference keep their kind, prefixed with the position of the call.
#pragma once

#include <string_view>

#include "anvil/graph/function.h"

namespace anvil::graph {

IRModule parse_module(std::string_view text);
// The text of exactly one function (and its constants); ValueError for zero or several.
Function parse_function(std::string_view text);

}  // namespace anvil::graph
