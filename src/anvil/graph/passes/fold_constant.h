// fold_constant: computes at compile time what does not depend on the inputs.
//  * shape_of(x) of a tensor with a static shape becomes shape(d0, d1, ...);
//  * shape_to_tensor(shape(...)) of constant dims becomes an int64 constant;
//  * a call whose arguments are all constants (at least one Constant; shape(...) arguments of
//    constant dims count as constant) is handed to `evaluate`, and its result, when it gives
//    one, replaces the call. graph/ cannot build kernels, so the evaluator is supplied by the
//    pipeline (pipeline/compile.cc builds the call's kernel and runs it); without one, only the
//    shape folding happens. The evaluator may decline (std::nullopt): the call stays. Calls of
//    tuple type and call_tir are never handed to it;
//  * projections of a tuple literal's var become the field, and a binding of a Var, a constant
//    or a shape value is propagated into its uses and removed;
//  * (module form) an `if` whose condition is a constant becomes the taken branch's bindings
//    (folded in turn) and result; branch functions no call reaches any more leave the module.
// Bindings whose types become more precise get new Vars of the new type. Folded bindings are
// removed; other bindings that became unused are dead_code_elimination's job.
#pragma once

#include <functional>
#include <optional>

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

// The value of a call whose arguments are constants, or nullopt to leave it. The tensor must have
// the call's dtype and (static) shape; InternalError otherwise.
using ConstantEvaluator = std::function<std::optional<Tensor>(const CallNode& call)>;

IRModule fold_constant(const IRModule& mod, const ConstantEvaluator& evaluate = nullptr);
Function fold_constant(const Function& f, const ConstantEvaluator& evaluate = nullptr);

}  // namespace anvil::graph::passes
