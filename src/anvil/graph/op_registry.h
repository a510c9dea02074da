// The graph operators: for each name ("add", "nn.conv2d"), its arity, its fusion pattern and
// its type inference — the one table every stage reads (the builder infers types through it,
// the verifier checks calls against it, fusion reads the pattern, the printer and parser
// know names from it). The kernels an operator lowers to live in ops/ (strategy table).
//
// Operators are registered by family (graph/ops/<family>.cc, each a register_<family>_ops()
// listed in graph/ops/ops.h) the first time the table is read; no static initialisers.
//
//   const OpInfo& info = get_op("nn.conv2d");
//   Type t = info.infer_type(call);      // ValueError naming the op and the bad operand
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/graph/expr.h"

namespace anvil::graph {

// TVM's fusion patterns, in increasing order of what they allow to fuse into them.
enum class OpPattern : uint8_t {
  kElemwise = 0,        // out[i] = f(in[i]) over equal shapes
  kBroadcast = 1,       // elementwise with broadcasting
  kInjective = 2,       // every output element reads a computed position (reshape, transpose, gather)
  kCommReduce = 3,      // reductions (sum, max, softmax's parts)
  kOutEWiseFusable = 4,  // conv, dense, matmul: elementwise ops fuse into the output
  kOpaque = 8,          // never fused (shape ops evaluated by the VM, control flow)
};
std::string_view op_pattern_name(OpPattern p);

struct OpInfo {
  std::string name;
  int min_args = 1;
  int max_args = 1;  // -1: any number
  OpPattern pattern = OpPattern::kOpaque;
  // The result type of a call whose arguments are typed (attrs and args as given). Throws
  // ValueError/TypeError for bad operands or attributes; the message need not name the op
  // (the builder prefixes "<op>: ").
  std::function<Type(const CallNode& call)> infer_type;
  std::string summary;  // one line for docs and `anvil inspect`
};

// nullptr when no operator has that name.
const OpInfo* find_op(const std::string& name);
// ValueError "unknown graph operator 'foo'" when absent.
const OpInfo& get_op(const std::string& name);
// Every operator, sorted by name.
std::vector<const OpInfo*> list_ops();
// Adds an operator (from a register_<family>_ops function); InternalError on a duplicate.
void register_op(OpInfo info);

}  // namespace anvil::graph
