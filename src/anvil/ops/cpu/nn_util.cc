// Shared helpers of the nn implementations (see nn_util.h).
#include "anvil/ops/cpu/nn_util.h"

#include <algorithm>
#include <set>

#include "anvil/base/error.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/cpu/vector_width.h"

namespace anvil::ops {
namespace {

void collect(const te::Tensor& t, std::set<const te::OperationNode*>& seen, std::vector<te::Tensor>& order) {
  if (!seen.insert(t.get()).second) return;
  for (const te::Tensor& in : t->inputs()) collect(in, seen, order);
  order.push_back(t);
}

}  // namespace

te::Tensor find_tensor(const std::vector<te::Tensor>& outputs, const std::string& name) {
  std::set<const te::OperationNode*> seen;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) collect(o, seen, order);
  for (const te::Tensor& t : order)
    if (t.name() == name) return t;
  return {};
}

std::vector<ir::PrimExpr> out_shape(const graph::CallNode& call) { return call.type().shape(); }

int lanes_for(const Target& target, ir::DataType dtype) {
  int bytes = std::max(1, dtype.bits() / 8);
  return std::max(1, vector_lanes_of(target) * 4 / bytes);
}

int vector_factor(const ir::PrimExpr& extent, int lanes) {
  std::optional<int64_t> c = ir::as_const_int(extent);
  int f = lanes;
  if (c)
    while (f > 4 && f > *c) f /= 2;
  if (f < 4 || (c && *c < f)) return 0;
  return f;
}

int row_vector_factor(const ir::PrimExpr& extent, int lanes) {
  if (std::optional<int64_t> c = ir::as_const_int(extent))
    for (int f = lanes; f >= std::max(4, lanes / 2); --f)
      if (*c % f == 0) return f;
  return vector_factor(extent, lanes);
}

te::IterVar fuse_all_parallel(te::Stage& st, const std::vector<te::IterVar>& axes) {
  te::IterVar fused = axes[0];
  for (size_t i = 1; i < axes.size(); ++i) fused = st.fuse(fused, axes[i]);
  st.parallel(fused);
  return fused;
}

void schedule_row_reduction(te::Schedule& s, const te::Tensor& out, const Target& target) {
  const int nd = out.ndim();
  te::Tensor local = s.cache_write(out, "local");
  te::Stage& st = s[out];
  const int vf = row_vector_factor(out.shape()[nd - 1], lanes_for(target, out.dtype()));
  std::vector<te::IterVar> lead;
  for (int i = 0; i + 1 < nd; ++i) lead.push_back(out.axis(i));
  te::IterVar row = out.axis(nd - 1);
  te::IterVar attach = row;
  if (vf > 0) {
    auto [xo, xi] = st.split(row, vf);
    st.vectorize(xi);
    attach = xo;
  }
  if (!lead.empty()) fuse_all_parallel(st, lead);
  s[local].compute_at(st, attach);
  // Reduction loops outside the vector of the row.
  std::vector<te::IterVar> order;
  for (int i = 0; i + 1 < nd; ++i) order.push_back(local.axis(i));
  for (const te::IterVar& r : local.reduce_axis()) order.push_back(r);
  order.push_back(local.axis(nd - 1));
  s[local].reorder(order);
  if (vf > 0) s[local].vectorize(local.axis(nd - 1));
}

bool schedule_plane_window(te::Schedule& s, const te::Tensor& out, const te::Tensor& reduction,
                           const te::Tensor& padded, const Target& target) {
  const int nd = out.ndim();
  const std::optional<int64_t> w = nd == 4 ? ir::as_const_int(out.shape()[3]) : std::nullopt;
  if (!w) return false;
  for (const te::IterVar& r : reduction.reduce_axis())
    if (!ir::as_const_int(r->dom().extent)) return false;
  const int lanes = lanes_for(target, out.dtype());
  const int vf = lanes >= 16 && (*w % 16 == 0 || *w >= 48) ? 16 : row_vector_factor(out.shape()[3], lanes);
  te::Tensor acc = reduction;
  if (out.get() == reduction.get()) acc = s.cache_write(reduction, "local");
  te::Stage& o = s[out];
  te::IterVar attach = out.axis(3);
  if (vf > 0) {
    auto [xo, xi] = o.split(out.axis(3), vf);
    o.vectorize(xi);
    attach = xo;
  }
  te::IterVar plane = fuse_all_parallel(o, {out.axis(0), out.axis(1)});
  if (padded.defined()) s[padded].compute_at(o, plane);
  te::Stage& a = s[acc];
  a.compute_at(o, attach);
  std::vector<te::IterVar> order = {acc.axis(0), acc.axis(1), acc.axis(2)};
  for (const te::IterVar& r : acc.reduce_axis()) order.push_back(r);
  order.push_back(acc.axis(3));
  a.reorder(order);
  for (const te::IterVar& r : acc.reduce_axis())
    if (*ir::as_const_int(r->dom().extent) > 1) a.unroll(r);
  if (vf > 0) a.vectorize(acc.axis(3));
  return true;
}

void inline_elementwise_except(te::Schedule& s, const std::vector<te::Tensor>& outputs,
                               const std::vector<std::string>& keep) {
  std::set<const te::OperationNode*> seen, outs;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) {
    outs.insert(o.get());
    collect(o, seen, order);
  }
  for (const te::Tensor& t : order) {
    if (!t.is_compute() || outs.count(t.get()) || !t.reduce_axis().empty()) continue;
    if (std::find(keep.begin(), keep.end(), t.name()) != keep.end()) continue;
    s[t].compute_inline();
  }
}

void schedule_row_reduction(te::Schedule& s, const te::Tensor& out, const te::Tensor& reduction,
                            const Target& target) {
  if (reduction.same_as(out)) return schedule_row_reduction(s, out, target);
  // An epilogue output: the reduction computed a vector of the row at a time inside its loop.
  const int nd = out.ndim();
  te::Stage& st = s[out];
  const int vf = row_vector_factor(out.shape()[nd - 1], lanes_for(target, out.dtype()));
  std::vector<te::IterVar> lead;
  for (int i = 0; i + 1 < nd; ++i) lead.push_back(out.axis(i));
  te::IterVar attach = out.axis(nd - 1);
  if (vf > 0) {
    auto [xo, xi] = st.split(out.axis(nd - 1), vf);
    st.vectorize(xi);
    attach = xo;
  }
  if (!lead.empty()) fuse_all_parallel(st, lead);
  s[reduction].compute_at(st, attach);
  std::vector<te::IterVar> order;
  for (int i = 0; i + 1 < nd; ++i) order.push_back(reduction.axis(i));
  for (const te::IterVar& r : reduction.reduce_axis()) order.push_back(r);
  order.push_back(reduction.axis(nd - 1));
  s[reduction].reorder(order);
  if (vf > 0) s[reduction].vectorize(reduction.axis(nd - 1));
}

namespace {

// The output of a row normalisation whose last dim is symbolic or a constant that is not a
// multiple of the vector: rows fused and parallel, the row split by the vector with the column
// loop kept apart, so loop_partition peels its guarded last tile and the full vectors stay
// vectorised (fused into the parallel loop, the guard could not be peeled and the whole row
// went scalar).
bool schedule_row_output(te::Schedule& s, const te::Tensor& out, const Target& target) {
  if (out.ndim() < 2) return false;
  const int lanes = std::max(1, vector_lanes_of(target) * 4 / std::max(1, out.dtype().bits() / 8));
  std::optional<int64_t> last = ir::as_const_int(out.shape().back());
  if (last && (*last % lanes == 0 || *last < lanes)) return false;  // the default schedule does well
  te::Stage& st = s[out];
  te::IterVar rows = out.axis()[0];
  for (int d = 1; d + 1 < out.ndim(); ++d) rows = st.fuse(rows, out.axis()[d]);
  auto [io, ii] = st.split(out.axis().back(), lanes);
  st.reorder({rows, io, ii});
  st.vectorize(ii);
  int64_t total = 1;  // -1: not a constant
  for (const ir::PrimExpr& d : out.shape()) {
    std::optional<int64_t> c = ir::as_const_int(d);
    total = c && total >= 0 ? total * *c : -1;
  }
  if (total < 0 || total >= kParallelMinElements) st.parallel(rows);  // as schedule_injective_output
  return true;
}

}  // namespace

void schedule_reductions_then_injective(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  std::set<const te::OperationNode*> seen, outs;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) {
    outs.insert(o.get());
    collect(o, seen, order);
  }
  for (const te::Tensor& t : order) {
    if (!t.is_compute() || outs.count(t.get())) continue;
    if (t.reduce_axis().empty()) {
      s[t].compute_inline();
      continue;
    }
    const std::string& name = t.name();
    const size_t suffix = std::char_traits<char>::length(kLanePartialSuffix);
    if (t.ndim() >= 2 && name.size() > suffix && name.compare(name.size() - suffix, suffix, kLanePartialSuffix) == 0) {
      // Lane partials: outer axes parallel, then the reduction, the lane axis one vector inside it.
      te::Stage& st = s[t];
      std::vector<te::IterVar> lead(t.axis().begin(), t.axis().end() - 1);
      te::IterVar outer = fuse_all_parallel(st, lead);
      std::vector<te::IterVar> order = {outer};
      for (const te::IterVar& r : t.reduce_axis()) order.push_back(r);
      order.push_back(t.axis().back());
      st.reorder(order);
      st.vectorize(t.axis().back());
      continue;
    }
    if (!t.axis().empty()) fuse_all_parallel(s[t], t.axis());
  }
  for (const te::Tensor& o : outputs)
    if (!schedule_row_output(s, o, target)) schedule_injective_output(s, o, target);
}

}  // namespace anvil::ops
