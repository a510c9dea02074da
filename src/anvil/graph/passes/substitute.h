// Rebuilding graph expressions with some Vars replaced — the shared step of the passes that
// change a binding's value (fold_constant, canonicalize). Not a pass itself.
//
// A call whose arguments changed is re-typed through its operator (infer_call_type; a call_tir
// keeps its type); tuples and projections take their new operands' types; a node whose operands
// did not change is returned as it is (same node).
#pragma once

#include <functional>
#include <unordered_map>

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

using VarMap = std::unordered_map<const ExprNode*, Expr>;

// `tuples` (optional): vars bound to tuple literals; a projection `%t.i` of one becomes the field
// (substituted too), while other uses of %t stay.
Expr substitute(const Expr& e, const VarMap& map, const VarMap* tuples = nullptr);

// Calls f on every Var that e uses (with repeats), operands before the node.
void for_each_var(const Expr& e, const std::function<void(const VarNode&)>& f);

// How many times each Var is used by the bindings' values and the result of `f`.
std::unordered_map<const ExprNode*, int> use_counts(const Function& f);

}  // namespace anvil::graph::passes
