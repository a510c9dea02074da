// lower_graph: the graph pass that turns operator calls into kernel calls. Every Call of a
// registered operator that has an implementation for the target (ops/strategy.h) becomes a
// call_tir Call of a PrimFunc made by ops::lower_call and added to IRModule::prim_funcs:
//
//   %y = nn.conv2d(%x, const[0], strides=[1, 1], ...)
//     ->  %y = call_tir(%x, const[0], func="fused_nn_conv2d", shape_vars=["n"], op="nn.conv2d")
//
// call_tir attributes: "func" (the PrimFunc's name), "shape_vars" (the names of the symbolic
// dimension Vars the kernel takes as trailing int32 scalars, in parameter order; the VM passes
// their values from its shape heap) and "op" (the operator lowered, for profiles and
// `anvil inspect`), "implementation" (the strategy table row that made it). Only tensor arguments stay: a ShapeExpr argument (reshape's target) is
// read by the compute at compile time and its symbolic values reach the kernel as shape vars.
//
// Identical calls share one PrimFunc: same operator and attributes, arguments and result of the
// same dtypes and structurally equal shapes up to a renaming of the symbolic Vars (so
// conv2d on (n, 64, 56, 56) twice is one kernel; the second call's "shape_vars" names its own
// Vars in the kernel's order).
//
// Operators the VM evaluates itself stay as they are (vm_evaluated_op): shape_of (a shape
// value), shape_to_tensor of a static shape (a constant) and reshape / squeeze / expand_dims
// (zero-copy views of a compact tensor, vm.builtin.reshape), check (a run-time assertion,
// vm.builtin.check). shape_to_tensor of a symbolic
// shape (a ShapeExpr, or shape_of a tensor, through Vars) becomes a small kernel that writes its
// shape vars' values. A call_fused (graph/passes/fuse_ops.h) becomes one kernel of its group
// (ops::lower_fused, named after the group); identical groups share it (same printed body and
// call shape); the group functions leave the module.
//
// The pass expects A-normal form (arguments are Vars, Constants, ShapeExprs or Tuples of those,
// as BlockBuilder writes) but lowers nested calls too. Errors: NotImplementedError naming the
// operator when it has no implementation for the target's family; errors of lower_call pass
// through with the operator named.
#pragma once

#include <string>

#include "anvil/graph/function.h"
#include "anvil/target/target.h"

namespace anvil::pipeline {

struct LowerGraphStats {
  int calls_lowered = 0;  // operator calls that became call_tir
  int kernels = 0;        // distinct PrimFuncs created (calls_lowered - kernels were shared)
};

// Operators left to the VM (see above).
bool vm_evaluated_op(const std::string& op);

// Lowers every function of the module; the result's prim_funcs hold the old ones plus the new
// kernels. `stats` (optional) receives counts.
graph::IRModule lower_graph(const graph::IRModule& mod, const Target& target, LowerGraphStats* stats = nullptr);

// The attribute names of call_tir Calls.
inline constexpr const char* kCallTIRFunc = "func";
inline constexpr const char* kCallTIRShapeVars = "shape_vars";
inline constexpr const char* kCallTIROp = "op";
inline constexpr const char* kCallTIRImplementation = "implementation";  // the strategy row's name

}  // namespace anvil::pipeline
