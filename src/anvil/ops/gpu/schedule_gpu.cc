// Default GPU schedules: thread binding, injective and row-wise (reduction) kernels.
#include "anvil/ops/gpu/schedule_gpu.h"

#include <algorithm>
#include <optional>
#include <set>

#include "anvil/arith/analyzer.h"
#include "anvil/ir/expr_ops.h"

namespace anvil::ops::gpu {
namespace {

void collect(const te::Tensor& t, std::set<const te::OperationNode*>& seen, std::vector<te::Tensor>& order) {
  if (!seen.insert(t.get()).second) return;
  for (const te::Tensor& in : t->inputs()) collect(in, seen, order);
  order.push_back(t);
}

// Every stage reachable from the outputs, producers first.
std::vector<te::Tensor> stages_of(const std::vector<te::Tensor>& outputs) {
  std::set<const te::OperationNode*> seen;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) collect(o, seen, order);
  return order;
}

bool is_output(const te::Tensor& t, const std::vector<te::Tensor>& outputs) {
  return std::any_of(outputs.begin(), outputs.end(), [&](const te::Tensor& o) { return o.get() == t.get(); });
}

ir::PrimExpr product(const std::vector<ir::PrimExpr>& dims, size_t begin, size_t end) {
  ir::PrimExpr n = ir::make_const(ir::DataType::int32(), 1);
  for (size_t i = begin; i < end; ++i) n = n * dims[i];
  arith::Analyzer ana;
  return ana.simplify(n);
}

void bind_threads_exact(te::Stage& st, const te::IterVar& axis, int64_t constant_factor, const Target& target);

// Fuses the first `rank` data-parallel axes of `out` (rank >= 1) into one loop, binds it; the
// other axes (and reduction axes) stay serial inside; `exact`: without overshoot (see
// bind_threads_exact). Returns the threadIdx axis.
te::IterVar bind_leading(te::Schedule& s, const te::Tensor& out, int rank, const Target& target, bool exact) {
  te::Stage& st = s[out];
  std::vector<te::IterVar> axes = out.axis();
  te::IterVar fused = axes[0];
  for (int i = 1; i < rank; ++i) fused = st.fuse(fused, axes[static_cast<size_t>(i)]);
  ir::PrimExpr extent = product(out.shape(), 0, static_cast<size_t>(rank));
  if (exact) {
    // The product of the constant dimensions divides the extent even when a dimension is symbolic.
    int64_t constant_factor = 1;
    for (int i = 0; i < rank; ++i)
      if (std::optional<int64_t> d = ir::as_const_int(out.shape()[static_cast<size_t>(i)])) constant_factor *= *d;
    bind_threads_exact(st, fused, constant_factor, target);
  } else {
    bind_threads(st, fused, extent, target);
  }
  // The innermost leaf bound to threadIdx.x is the attach point (bind_threads leaves it last
  // among the bound axes).
  for (const te::IterVar& iv : st.leaf_iter_vars()) {
    const te::IterAttr* a = st->find_attr(iv);
    if (a != nullptr && a->thread_tag == "threadIdx.x") return iv;
  }
  return fused;
}

// Binds without overshooting the extent (no guard, so stages computed at the invocation get
// constant regions even for symbolic extents): split by the largest divisor of the extent's
// constant factor (the product of its constant dimensions) not above the thread count, so a
// symbolic batch keeps full workgroups (n x 64 x 112 x 112 outputs: 128 invocations each).
void bind_threads_exact(te::Stage& st, const te::IterVar& axis, int64_t constant_factor, const Target& target) {
  int64_t threads = 1;
  for (int64_t t = std::min(gpu_threads(target), constant_factor); t >= 1; --t)
    if (constant_factor % t == 0) {
      threads = t;
      break;
    }
  auto [bx, tx] = st.split(axis, ir::PrimExpr(static_cast<int>(threads)));
  st.bind(bx, "blockIdx.x");
  st.bind(tx, "threadIdx.x");
}

}  // namespace

int64_t gpu_threads(const Target& target) {
  int64_t limit = kGpuThreads;
  if (target.kind() == TargetKind::kVulkan || target.kind() == TargetKind::kCUDA || target.kind() == TargetKind::kOpenCL) {
    if (std::optional<int64_t> m = target.get_int("max_num_threads")) limit = std::min(limit, *m);
  }
  return std::max<int64_t>(1, limit);
}

void bind_threads(te::Stage& st, const te::IterVar& axis, const ir::PrimExpr& extent, const Target& target) {
  int64_t threads = gpu_threads(target);
  std::optional<int64_t> n = ir::as_const_int(extent);
  if (n && *n <= threads) {
    // Small: one workgroup, every invocation of it in use.
    auto [bx, tx] = st.split(axis, ir::PrimExpr(static_cast<int>(*n)));
    st.bind(bx, "blockIdx.x");
    st.bind(tx, "threadIdx.x");
    return;
  }
  auto [outer, tx] = st.split(axis, ir::PrimExpr(static_cast<int>(threads)));
  if (n && (*n + threads - 1) / threads <= kMaxWorkgroupsPerAxis) {
    st.bind(outer, "blockIdx.x");
    st.bind(tx, "threadIdx.x");
    return;
  }
  // Possibly more workgroups than one grid axis holds: blockIdx.y x blockIdx.x, with x's extent
  // min(groups, 65535) (an expression of the shape slots, which the launch metadata evaluates).
  arith::Analyzer ana;
  ir::PrimExpr groups = ana.simplify(ir::floordiv(extent + ir::make_const(extent.dtype(), threads - 1),
                                                  ir::make_const(extent.dtype(), threads)));
  ir::PrimExpr per_x = ana.simplify(ir::min(groups, ir::make_const(groups.dtype(), kMaxWorkgroupsPerAxis)));
  auto [by, bx] = st.split(outer, per_x);
  st.bind(by, "blockIdx.y");
  st.bind(bx, "blockIdx.x");
  st.bind(tx, "threadIdx.x");
}

void inline_injective_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs) {
  for (const te::Tensor& t : stages_of(outputs))
    if (t.is_compute() && t.reduce_axis().empty() && !is_output(t, outputs)) s[t].compute_inline();
}

void bind_output_gpu(te::Schedule& s, const te::Tensor& out, const Target& target) {
  // A 0-d output has no axis to bind: the kernel has no thread loop, and the code generator
  // launches it as one workgroup of one invocation.
  if (out.ndim() == 0) return;
  bind_leading(s, out, out.ndim(), target, false);
}

void schedule_injective_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  inline_injective_gpu(s, outputs);
  for (const te::Tensor& o : outputs) bind_output_gpu(s, o, target);
}

void schedule_rows_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target, int row_rank) {
  inline_injective_gpu(s, outputs);
  std::vector<te::Tensor> stages = stages_of(outputs);
  for (const te::Tensor& o : outputs) {
    if (o.ndim() == 0) continue;
    int rank = std::clamp(row_rank, 1, o.ndim());
    bool attach = false;
    for (const te::Tensor& t : stages)
      attach = attach || (t.is_compute() && !t.reduce_axis().empty() && !is_output(t, outputs));
    te::IterVar at = bind_leading(s, o, rank, target, attach);
    // Intermediate reductions: once per invocation, in invocation-local memory.
    for (const te::Tensor& t : stages) {
      if (!t.is_compute() || t.reduce_axis().empty() || is_output(t, outputs)) continue;
      te::Stage& st = s[t];
      if (st->attach != te::AttachKind::kRoot) continue;  // already placed (other output)
      st.set_scope("local");
      st.compute_at(s[o], at);
    }
  }
}

void schedule_reduce_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  schedule_rows_gpu(s, outputs, target, 1 << 20);
}

void schedule_row_wise_gpu(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  int rank = 1 << 20;
  for (const te::Tensor& o : outputs) rank = std::min(rank, std::max(1, o.ndim() - 1));
  schedule_rows_gpu(s, outputs, target, rank);
}

}  // namespace anvil::ops::gpu
