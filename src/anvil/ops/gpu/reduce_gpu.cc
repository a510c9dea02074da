// Workgroup (shared-memory) reductions over the innermost axes for the gpu family.
#include "anvil/ops/gpu/reduce_gpu.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/gpu/schedule_gpu.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops::gpu {
namespace {

using ir::PrimExpr;
using ir::Var;

constexpr const char* kPartialSuffix = "_wgpartial";

// The first reduced axis when the reduction is one this file handles, else nullopt.
std::optional<int> workgroup_reducible(const graph::CallNode& call, const te::Tensor& x) {
  const std::string& op = call.op();
  if (op != "sum" && op != "mean" && op != "max" && op != "min") return std::nullopt;
  ir::DataType dt = x.dtype();
  if (!(dt == ir::DataType::float32() || dt == ir::DataType::float64()) || call.type().dtype() != dt) return std::nullopt;
  std::vector<int64_t> given = graph::get_ints(call.attrs(), "axes", {});
  std::vector<int> axes;
  if (given.empty())
    for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  else
    axes = graph::ops::normalize_axes(given, x.ndim());
  std::sort(axes.begin(), axes.end());
  // The innermost axes, with at least one kept axis (a row per workgroup).
  if (axes.empty() || axes.back() != x.ndim() - 1 || axes.front() == 0) return std::nullopt;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) return std::nullopt;
  PrimExpr k = ir::make_const(ir::DataType::int32(), 1);
  for (int d = axes.front(); d < x.ndim(); ++d) k = k * x.shape()[static_cast<size_t>(d)];
  if (std::optional<int64_t> c = ir::as_const_int(k); c && *c < kWorkgroupReduceMin) return std::nullopt;
  return axes.front();
}

PrimExpr fold(const std::string& op, const PrimExpr& v, const std::vector<te::IterVar>& axes) {
  if (op == "max") return te::max(v, axes);
  if (op == "min") return te::min(v, axes);
  return te::sum(v, axes);
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<te::Tensor> workgroup_reduce_compute(const graph::CallNode& call, const std::vector<te::Tensor>& in) {
  const te::Tensor& x = in[0];
  std::optional<int> first = workgroup_reducible(call, x);
  if (!first) {
    const OpImplementation* cpu = find_implementation(call.op(), "cpu");
    ANVIL_ICHECK(cpu != nullptr, "no cpu row for ", call.op());
    return cpu->compute(call, in);
  }
  const std::string op = call.op();
  const int d = *first;
  const std::vector<PrimExpr>& xs = x.shape();
  std::vector<PrimExpr> inner(xs.begin() + d, xs.end());
  PrimExpr k = inner[0];
  for (size_t i = 1; i < inner.size(); ++i) k = k * inner[i];
  const int T = static_cast<int>(kWorkgroupReduceThreads);
  std::vector<PrimExpr> pshape(xs.begin(), xs.begin() + d);
  pshape.push_back(ir::int_imm(T));
  te::IterVar j = te::reduce_axis(0, ir::floordiv(k + (T - 1), T), "j");
  te::Tensor partial = te::compute(
      pshape,
      [&](const std::vector<Var>& v) {
        PrimExpr flat = j.var() * T + v[static_cast<size_t>(d)];
        // Past the end: the last element (harmless for max/min) or zero (sum).
        PrimExpr at = ir::min(flat, k - 1);
        std::vector<PrimExpr> idx(v.begin(), v.begin() + d), tail(inner.size());
        for (size_t a = inner.size(); a-- > 0;) {
          tail[a] = a == 0 ? at : ir::floormod(at, inner[a]);
          at = ir::floordiv(at, inner[a]);
        }
        idx.insert(idx.end(), tail.begin(), tail.end());
        PrimExpr e = x(idx);
        if (op == "sum" || op == "mean") e = ir::select(flat < k, e, ir::make_zero(x.dtype()));
        return fold(op, e, {j});
      },
      op + kPartialSuffix);
  const std::vector<PrimExpr> oshape = call.type().shape();
  te::IterVar t = te::reduce_axis(0, T, "t");
  auto row_of = [&](const std::vector<Var>& v) {
    std::vector<PrimExpr> r(v.begin(), v.begin() + d);  // keepdims: the trailing 1s dropped
    return r;
  };
  te::Tensor total = te::compute(
      oshape,
      [&](const std::vector<Var>& v) {
        std::vector<PrimExpr> r = row_of(v);
        r.push_back(t.var());
        return fold(op, partial(r), {t});
      },
      op == "mean" ? "mean_sum" : op);
  if (op != "mean") return {total};
  return {te::compute(
      oshape, [&](const std::vector<Var>& v) { return total(std::vector<PrimExpr>(v.begin(), v.end())) / ir::cast(x.dtype(), k); },
      "mean")};
}

void schedule_workgroup_reduce(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  // Find the partials stage: a reachable compute named "<op>_wgpartial".
  std::vector<te::Tensor> todo(outputs.begin(), outputs.end()), stages;
  std::set<const te::OperationNode*> seen;
  while (!todo.empty()) {
    te::Tensor t = todo.back();
    todo.pop_back();
    if (!seen.insert(t.get()).second) continue;
    stages.push_back(t);
    for (const te::Tensor& i : t->inputs()) todo.push_back(i);
  }
  te::Tensor partial;
  for (const te::Tensor& t : stages)
    if (t.is_compute() && ends_with(t.name(), kPartialSuffix)) partial = t;
  if (!partial.defined() || outputs.size() != 1) return schedule_reduce_gpu(s, outputs, target);
  const te::Tensor& out = outputs[0];
  inline_injective_gpu(s, outputs);
  // The output: one workgroup per row (its axes fused: the reduced ones are 1 or absent), its
  // store (and the final fold) by the first invocation.
  te::Stage& st = s[out];
  std::vector<te::IterVar> axes = out.axis();
  te::IterVar fused = axes[0];
  for (size_t i = 1; i < axes.size(); ++i) fused = st.fuse(fused, axes[i]);
  auto [bx, tx] = st.split(fused, ir::PrimExpr(1));
  st.bind(bx, "blockIdx.x");
  st.bind(tx, "threadIdx.x");
  te::Stage& ps = s[partial];
  ps.set_scope("shared");
  ps.bind(partial.axis(partial.ndim() - 1), "threadIdx.x");
  ps.compute_at(st, bx);
  for (const te::Tensor& t : stages) {
    if (!t.is_compute() || t.reduce_axis().empty() || t.get() == out.get() || t.get() == partial.get()) continue;
    te::Stage& rs = s[t];
    rs.set_scope("local");
    rs.compute_at(st, tx);
  }
}

}  // namespace anvil::ops::gpu
