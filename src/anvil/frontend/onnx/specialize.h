// Nodes whose small integer input (ReduceSum's axes, CumSum's axis, Squeeze/Unsqueeze's axes) is a
// value known only at run time. Its shape is static, and the input it indexes has a static rank,
// so it can take only a few values that matter: the node is imported once per candidate value
// (the converter's own static path, seeing that input as a known value: the real kernels, no
// second implementation), each candidate a Function of the module, and graph `if`s on a code
// the graph computes from the value pick one at run time (a binary search over the codes,
// log2(N) ifs deep). Results whose dims differ per candidate get fresh symbolic dims
// (control_flow.h's unify), bound when the if has run. A value that is none of the candidates
// fails at run time through graph `check` with a message naming the node, before any branch.
//
//   // In a converter: axes known only at run time -> one import per set of k axes of rank r.
//   if (!has_known_ints(ctx, 1)) return specialize_on_axes(ctx, 1, rank, nullptr, static_converter);
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "anvil/frontend/onnx/converters.h"

namespace anvil::frontend::onnx {

// More variants than this: unsupported (the branches are imported and compiled each).
inline constexpr int64_t kMaxVariants = 64;

// Whether input i is present and its elements are known constants at import.
bool has_known_ints(const ImportContext& ctx, int i);

// The node imported once per candidates[i] as the value of input `input` (`convert` sees it as
// known values of that input's static shape), selected at run time by code_of(value): a 0-d
// int64 expression built in the node's graph, equal to codes[i] exactly when the value is
// candidates[i] (codes distinct, at most kMaxVariants). A value whose code is none of them fails
// the run with "<node>: <message>; got <value>" (a ValueError).
std::vector<graph::Expr> specialize_on_values(ImportContext& ctx, int input,
                                              const std::vector<std::vector<int64_t>>& candidates,
                                              const std::vector<int64_t>& codes,
                                              const std::function<graph::Expr(const graph::Expr& value)>& code_of,
                                              const std::string& message, const Converter& convert);

// Axes known only at run time: input `input` holds k integers (a 0-d or 1-d tensor of static
// shape) that are axes in [-n, n), negatives counting from the end. The candidates are the sets
// of k distinct axes (ascending) that `allowed` accepts (nullptr: all); a value's code is the
// bitmask of its normalised axes, so their order does not matter and a repeated or out-of-range
// axis matches no candidate (a run-time error). unsupported() above kMaxVariants candidates or
// with none.
std::vector<graph::Expr> specialize_on_axes(ImportContext& ctx, int input, int64_t n,
                                            const std::function<bool(const std::vector<int64_t>&)>& allowed,
                                            const Converter& convert);

}  // namespace anvil::frontend::onnx
