// Default injective CPU schedule.
#include "anvil/ops/cpu/schedule_injective.h"

#include <algorithm>
#include <set>

#include "anvil/ops/cpu/vector_width.h"

namespace anvil::ops {
namespace {

void collect(const te::Tensor& t, std::set<const te::OperationNode*>& seen, std::vector<te::Tensor>& order) {
  if (!seen.insert(t.get()).second) return;
  for (const te::Tensor& in : t->inputs()) collect(in, seen, order);
  order.push_back(t);
}

}  // namespace

void inline_injective_stages(te::Schedule& s, const std::vector<te::Tensor>& outputs) {
  std::set<const te::OperationNode*> seen, outs;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) {
    outs.insert(o.get());
    collect(o, seen, order);
  }
  for (const te::Tensor& t : order)
    if (t.is_compute() && t.reduce_axis().empty() && outs.count(t.get()) == 0) s[t].compute_inline();
}

void schedule_injective_output(te::Schedule& s, const te::Tensor& out, const Target& target) {
  te::Stage& st = s[out];
  std::vector<te::IterVar> axes = st.leaf_iter_vars();
  if (axes.empty()) return;  // 0-d output: one store
  // Float32 lanes of the target, scaled to the element size (int8: 4x as many).
  int bytes = std::max(1, out.dtype().bits() / 8);
  int lanes = std::max(1, vector_lanes_of(target) * 4 / bytes);
  int64_t total = 1;  // -1: not a constant
  for (const ir::PrimExpr& d : out.shape()) {
    std::optional<int64_t> c = ir::as_const_int(d);
    total = c && total >= 0 ? total * *c : -1;
  }
  if (total >= 0 && total < lanes) return;
  std::optional<int64_t> inner_extent = ir::as_const_int(out.shape().back());
  te::IterVar outer;
  if (axes.size() == 1 || (inner_extent && *inner_extent < lanes)) {
    // A short innermost dimension: vectorize over the whole flattened index instead.
    te::IterVar fused = axes[0];
    for (size_t i = 1; i < axes.size(); ++i) fused = st.fuse(fused, axes[i]);
    auto [o, v] = st.split(fused, lanes);
    st.vectorize(v);
    outer = o;
  } else {
    // Vectorize the innermost dimension only, so the indices of broadcast operands stay affine
    // in the vector lane (no division per element); the rest is one parallel loop.
    auto [io, ii] = st.split(axes.back(), lanes);
    st.vectorize(ii);
    outer = axes[0];
    for (size_t i = 1; i + 1 < axes.size(); ++i) outer = st.fuse(outer, axes[i]);
    outer = st.fuse(outer, io);
  }
  if (total < 0 || total >= kParallelMinElements) st.parallel(outer);
}

void schedule_injective(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  inline_injective_stages(s, outputs);
  for (const te::Tensor& o : outputs) schedule_injective_output(s, o, target);
}

}  // namespace anvil::ops
