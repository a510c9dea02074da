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

#include "anvil/graph/function.h"
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

// A fused group (graph/passes/fuse_ops.h) as one kernel: a placeholder per group parameter, each
// binding's compute from the strategy table on the tensors of the earlier ones, the default
// injective schedule on the group's result (every intermediate inlined), and the same parameter
// convention as lower_call (the call's tensor arguments, the output, the shape vars of the
// arguments' and result's types). `call` is the call_fused; implementation is
// "fused(add.cpu,clip.cpu,...)". A group with an anchor (a kOutEWiseFusable op: conv, dense,
// matmul, pool) is scheduled by the anchor's implementation, the other calls its epilogue (its
// schedules take an elementwise output after their stage); others by schedule_injective.
// NotImplementedError when a binding's op has no implementation.
LoweredCall lower_fused(const graph::Function& group, const graph::CallNode& call, const Target& target,
                        const std::string& name);

// Every free symbolic Var in the dimensions of these types, sorted by name (then identity).
std::vector<ir::Var> shape_vars_of(const std::vector<graph::Type>& types);

}  // namespace anvil::ops
