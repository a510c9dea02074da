// The "gpu" family's rows of the strategy table (vulkan; later cuda and opencl).
//
// The rule for computes, in one place: a gpu row reuses the cpu row's compute definition
// (looked up when the row is used: find_implementation(op, "cpu"), so the definitions are never
// copied) for every op whose cpu compute is layout-neutral — it computes the graph op's result
// in the graph's own layout, with no packed or blocked intermediate chosen for a CPU's vector
// width. That holds for the elementwise, broadcast and transform ops, the reductions, the
// norms and softmaxes, and pooling; the gpu row then pairs it with a gpu schedule
// (ops/gpu/schedule_gpu.h). Ops whose cpu compute packs for the CPU (nn.conv2d's x86 layouts,
// dense/matmul) get their own gpu computes (conv2d_gpu.h, matmul_gpu.cc) or no gpu row yet. Hand-written
// kernels (OpImplementation::kernel: cumsum, topk, scatter) are the cpu loop nest run by a
// single invocation (one workgroup of one), which is correct but serial.
#include <string>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ops/gpu/conv2d_gpu.h"
#include "anvil/ops/gpu/reduce_gpu.h"
#include "anvil/ops/gpu/schedule_gpu.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {
namespace {

const OpImplementation& cpu_row(const std::string& op) {
  const OpImplementation* impl = find_implementation(op, "cpu");
  ANVIL_ICHECK(impl != nullptr, "gpu row of '", op, "' without a cpu row to take its compute from");
  return *impl;
}

// The cpu row's compute with a gpu schedule.
void reuse(const std::string& op, ScheduleFn schedule, const std::string& kind) {
  ComputeFn compute = [op](const graph::CallNode& call, const std::vector<te::Tensor>& inputs) {
    return cpu_row(op).compute(call, inputs);
  };
  register_implementation(op, "gpu", {op + "." + kind + ".gpu", std::move(compute), std::move(schedule)});
}

// The cpu row's hand-written loop nest, run by one invocation.
void single_invocation(const std::string& op) {
  OpImplementation impl;
  impl.name = op + ".single.gpu";
  impl.kernel = [op](const graph::CallNode& call, const std::vector<ir::Buffer>& inputs,
                     const std::vector<ir::Buffer>& outputs, const Target& target) {
    tir::Stmt body = cpu_row(op).kernel(call, inputs, outputs, target);
    ir::Var bx("bx"), tx("tx");
    return tir::make_thread_for(bx, 0, 1, "blockIdx.x", tir::make_thread_for(tx, 0, 1, "threadIdx.x", body));
  };
  register_implementation(op, "gpu", std::move(impl));
}

const char* const kInjectiveOps[] = {
    // elementwise unary
    "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
    "atanh", "tanh", "sigmoid", "erf", "floor", "ceil", "round", "trunc", "abs", "isnan", "isfinite", "bitwise_not",
    "logical_not", "negative", "reciprocal", "relu", "sign", "softplus", "softsign", "mish", "hard_swish",
    "leaky_relu", "elu", "selu", "celu", "hard_sigmoid", "thresholded_relu", "gelu", "isinf", "clip", "cast",
    // elementwise binary / ternary (broadcasting)
    "add", "subtract", "multiply", "divide", "maximum", "minimum", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "equal",
    "not_equal", "logical_xor", "floor_divide", "mod", "power", "prelu", "where",
    // transforms
    "reshape", "transpose", "expand_dims", "squeeze", "broadcast_to", "concat", "split", "strided_slice", "take",
    "tile", "pad", "copy", "full", "arange", "gather_elements", "trilu", "one_hot", "depth_to_space",
    "space_to_depth", "resize2d", "resize2d_antialias", "gather_nd",
    // inference batch norm: one broadcast expression
    "nn.batch_norm",
};

// One invocation per output element, the reduction serial inside it.
const char* const kReduceOps[] = {
    "prod", "argmax", "argmin",
    "nn.lrn", "nn.max_pool2d", "nn.max_pool2d_indices", "nn.avg_pool2d", "nn.global_max_pool2d", "nn.global_avg_pool2d",
};

// One invocation per row (all axes but the innermost), the row's statistics computed once in it.
const char* const kRowWiseOps[] = {
    "nn.softmax", "nn.log_softmax", "nn.layer_norm", "nn.rms_norm", "nn.instance_norm", "nn.group_norm",
};

const char* const kKernelOps[] = {"cumsum", "topk", "scatter_elements", "scatter_nd"};

}  // namespace

void register_gpu_strategies() {
  for (const char* op : kInjectiveOps) reuse(op, gpu::schedule_injective_gpu, "injective");
  // sum/mean/max/min: a workgroup reduction in shared memory over long innermost axes
  // (reduce_gpu.h), else the cpu compute with the serial schedule.
  for (const char* op : {"sum", "mean", "max", "min"})
    register_implementation(op, "gpu", {std::string(op) + ".reduce.gpu", gpu::workgroup_reduce_compute,
                                        gpu::schedule_workgroup_reduce});
  for (const char* op : kReduceOps) reuse(op, gpu::schedule_reduce_gpu, "reduce");
  for (const char* op : kRowWiseOps) reuse(op, gpu::schedule_row_wise_gpu, "rows");
  for (const char* op : kKernelOps) single_invocation(op);
  register_implementation("nn.conv2d", "gpu", {"conv2d_nchw_direct.gpu", gpu::conv2d_nchw_direct, gpu::schedule_reduce_gpu});
}

}  // namespace anvil::ops
