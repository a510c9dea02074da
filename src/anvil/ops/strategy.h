// The strategy table: (graph operator, target family) -> implementation, where an
// implementation is a compute definition (TE) and a schedule. Lowering a graph call reads this
// table only; adding a back end's schedules adds rows; the tuner replaces a schedule through
// the same table.
//
//   const OpImplementation& impl = select_implementation("nn.conv2d", target);
//   std::vector<te::Tensor> outs = impl.compute(call, inputs);    // inputs: one placeholder per
//   te::Schedule s = te::create_schedule(outs);                  // tensor argument
//   impl.schedule(s, outs, target);
//
// compute receives the graph call (for attributes, ShapeExpr arguments and the inferred output
// type, whose dimensions are the same Vars as the inputs') and one te placeholder per argument
// (undefined for non-tensor arguments such as ShapeExprs). It returns the output tensors: one,
// or one per field of a tuple-typed call. Outputs must have the call's inferred shape/dtype.
//
// schedule receives the schedule of the outputs and may restructure every stage it created.
//
// kernel, instead of compute + schedule: a hand-written loop nest (tir) over buffers of the
// argument types (undefined for non-tensor arguments) and of the output types, for what TE
// cannot express: a scan carrying an accumulator, a per-row heap. lower_call makes it a PrimFunc
// with the same parameter convention; such an operator must not be fused (kOpaque).
// Families: "cpu" (llvm and c targets), "gpu" (vulkan, cuda, opencl) — target_family().
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/target/target.h"
#include "anvil/te/schedule.h"
#include "anvil/te/tensor.h"
#include "anvil/tir/stmt.h"

namespace anvil::ops {

using ComputeFn = std::function<std::vector<te::Tensor>(const graph::CallNode& call, const std::vector<te::Tensor>& inputs)>;
using ScheduleFn = std::function<void(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target)>;
using KernelFn = std::function<tir::Stmt(const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                                         const std::vector<ir::Buffer>& outputs, const Target& target)>;

struct OpImplementation {
  OpImplementation() = default;
  // A compute definition with its schedule (the usual row; {name, compute, schedule} reads as before).
  OpImplementation(std::string n, ComputeFn c, ScheduleFn s)
      : name(std::move(n)), compute(std::move(c)), schedule(std::move(s)) {}

  std::string name;  // "conv2d_nchw.x86", for --dump-ir and profiles
  ComputeFn compute;
  ScheduleFn schedule;
  KernelFn kernel;  // when set, compute and schedule are unused
};

// "cpu" for llvm and c; "gpu" for device kinds.
std::string target_family(const Target& target);

// NotImplementedError "no implementation of graph operator 'nn.lrn' for target family 'gpu'".
const OpImplementation& select_implementation(const std::string& op, const Target& target);
const OpImplementation* find_implementation(const std::string& op, const std::string& family);
// Adds a row (from a register_<family>_strategies function); InternalError on a duplicate.
void register_implementation(const std::string& op, const std::string& family, OpImplementation impl);
// Every (op, family) with an implementation, sorted.
std::vector<std::pair<std::string, std::string>> list_implementations();

// Registration by family file (ops/<family>.cc), called once when the table is first read.
void register_elementwise_strategies();
void register_reduce_strategies();
void register_nn_strategies();
void register_transform_strategies();
// The "gpu" family (vulkan, later cuda and opencl): ops/gpu/.
void register_gpu_strategies();
void register_gpu_matmul_strategies();

}  // namespace anvil::ops
