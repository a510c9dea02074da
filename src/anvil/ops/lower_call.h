// Lowering one graph call (or a fused group's composite call) to a PrimFunc through the
// strategy table: placeholders for the tensor arguments (shaped by their graph types, so a
// symbolic `n` is the graph's own Var), the implementation's compute and schedule, te::lower.
// The TIR pass pipeline runs later, in pipeline::build.
//
// The kernel's parameters, in order: the tensor arguments, the outputs (one, or one per tuple
// field), then every symbolic dimension variable the shapes use, as an int32 scalar sorted by
// name (LoweredCall::shape_vars) — the VM passes their values from its shape heap, so a
// kernel never has to recover `n` from a dimension written `n * 2`.
#pragma once

#include <string>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/tir/prim_func.h"

namespace anvil::ops {

struct LoweredCall {
  tir::PrimFunc func;                 // global_symbol = name
  std::vector<ir::Var> shape_vars;    // the trailing scalar parameters, in order
  std::string implementation;         // OpImplementation::name
};

// NotImplementedError when the op has no implementation for the target's family; errors of
// compute/schedule/lowering pass through with the op's name prefixed.
LoweredCall lower_call(const graph::CallNode& call, const Target& target, const std::string& name);

// Every free symbolic Var in the dimensions of these types, sorted by name (then identity).
std::vector<ir::Var> shape_vars_of(const std::vector<graph::Type>& types);

}  // namespace anvil::ops
