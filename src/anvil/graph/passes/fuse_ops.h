// fuse_ops: operator fusion of elementwise, broadcast and injective calls, of conv/dense/matmul
// with their elementwise epilogues, and of reductions with their prologue and epilogue (issue #11
// item 3).
//
// A group is a maximal tree of calls whose operators' pattern is kElemwise, kBroadcast or
// kInjective (op_registry.h), rooted at one call, in which every other call's value has exactly
// one use, inside the group (so not the function result either). Each group of two or more calls
// becomes a graph Function of the module, named after its operators through
// IRModule::unique_name ("fused_add_clip_multiply_divide"): its parameters are the group's
// external inputs (Vars, constants, tuple projections, in order of first use) and its bindings
// the group's calls, in their original order. In the caller the group becomes one binding
//
//   %y: Tensor[(n, 4), float32] = call_fused(%x, const[0], func="fused_add_relu")
//
// at the root's place, typed with the root's type (call_fused has no type inference: the type is
// the callee's result type, set here; the verifier checks it against the callee). lower_graph
// lowers a call_fused into one kernel (ops::lower_fused). Group parameters are named p0, p1, ...
// and the group's values t0, t1, ..., so identical groups print identically.
//
// Anchor groups: a call of pattern kOutEWiseFusable (nn.conv2d, nn.dense, matmul, the pools)
// joins no group before it, but elementwise/broadcast calls after it whose type is exactly the
// anchor's (bias add, relu/clip/hardswish/sigmoid-multiply, a residual add) adopt it as above,
// one anchor per group; the anchor's value may then also have several uses when all are such
// calls of the group. lower_fused schedules such a group with the anchor's schedule, the rest
// computed as its epilogue ("fused_nn_conv2d_add_clip").
//
// Reduction anchors: sum, mean, max, min, prod, argmax and argmin (kCommReduce, one data input)
// anchor a group the same way, and besides adopt the group computing their data input when it
// is a plain group (no anchor) whose root has that single use: the prologue, inlined into the
// reduction by its schedule. mean(multiply(%d, %d)) then add(eps), sqrt is one kernel
// ("fused_multiply_mean_add_sqrt"); a prologue value with a second use stays outside. A 0-d
// reduction (every axis, keepdims=0) takes an epilogue too: its value is then a one-element
// buffer inside the kernel (te lowering allocates a 0-d stage as one element).
//
// `fusible` (optional) narrows which calls may join a group beyond the pattern; the pipeline
// passes one that leaves out the operators the VM evaluates itself (views, shape values) and
// those without a kernel for the target. Calls with a non-tensor result, or with an argument that
// is neither a tensor value nor a ShapeExpr, are never fused.
#pragma once

#include <functional>

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

using FusiblePredicate = std::function<bool(const CallNode& call)>;

// Fuses in every function of the module (the group functions are added to it). Functions with no
// group are returned as they are.
IRModule fuse_ops(const IRModule& mod, const FusiblePredicate& fusible = nullptr);

}  // namespace anvil::graph::passes
