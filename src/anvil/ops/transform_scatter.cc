// gather_nd, scatter_elements and scatter_nd computes (graph/ops/gather_scatter.cc). A scatter
// is written as a gather: each output element reduces over every update position, finding the
// last update addressed to it ("none": a max over positions) or combining them (add/max/min;
// mul unrolled over at most 64 positions, TE having no product reduction),
// then reads it or keeps data's element. That costs O(output x updates) — fine for the small
// scatters models export (cache updates, masks); a large one wants a sequential kernel.
#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/ops/op_util.h"
#include <functional>

#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/strategy.h"
#include "anvil/te/reduction.h"

namespace anvil::ops {
namespace {

using graph::get_int;
using graph::get_string;
using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using te::Tensor;

PrimExpr clamp(const PrimExpr& x, const PrimExpr& lo, const PrimExpr& hi) { return max(min(x, hi), lo); }
PrimExpr wrap_index(const PrimExpr& raw, const PrimExpr& dim) {
  PrimExpr i = raw.dtype() == DataType::int32() ? raw : cast(DataType::int32(), raw);
  return select(i < 0, i + dim, i);
}
int const_dim(const PrimExpr& d) { return static_cast<int>(*ir::as_const_int(d)); }

std::vector<Tensor> gather_nd(const graph::CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &ind = in[1];
  int b = static_cast<int>(get_int(call.attrs(), "batch_dims", 0));
  int r = ind.ndim(), q = const_dim(ind.shape().back());
  return {te::compute(call.type().shape(), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> idx(i.begin(), i.begin() + b);
    std::vector<PrimExpr> ii(i.begin(), i.begin() + (r - 1));
    for (int k = 0; k < q; ++k) {
      std::vector<PrimExpr> at = ii;
      at.push_back(ir::int_imm(k));
      idx.push_back(clamp(wrap_index(ind(at), x.shape()[b + k]), 0, x.shape()[b + k] - 1));
    }
    idx.insert(idx.end(), i.begin() + (r - 1), i.end());
    return x(idx);
  }, "gather_nd")};
}

// The output of a scatter from its per-element reduction: "none" reads the last update (found
// index `found` >= 0, -1 when none), the others combine with data's element.
struct ScatterParts {
  std::function<PrimExpr(const std::vector<Var>& i, const PrimExpr& k)> matches;  // update k addresses element i
  std::function<PrimExpr(const std::vector<Var>& i, const PrimExpr& k)> update;   // update k's value for element i
  PrimExpr extent;                                                                // number of update positions
};

Tensor scatter(const graph::CallNode& call, const Tensor& data, const ScatterParts& p) {
  std::string red = get_string(call.attrs(), "reduction", "none");
  DataType dt = data.dtype();
  if (red == "mul") {
    // No product reduction in TE: the product is unrolled over the update positions.
    std::optional<int64_t> n = ir::as_const_int(arith::simplify(p.extent));
    if (!n || *n > 64) not_implemented_error("reduction 'mul' over more than 64 (or a symbolic number of) update positions");
    return te::compute(data.shape(), [&](const std::vector<Var>& i) {
      PrimExpr v = data(std::vector<PrimExpr>(i.begin(), i.end()));
      for (int64_t k = 0; k < *n; ++k) {
        PrimExpr kk = ir::int_imm(k);
        v = v * select(p.matches(i, kk), p.update(i, kk), ir::make_const(dt, 1));
      }
      return v;
    }, "scatter");
  }
  if (red == "none") {
    Tensor last = te::compute(data.shape(), [&](const std::vector<Var>& i) {
      te::IterVar k = te::reduce_axis(0, p.extent, "k");
      return te::max(select(p.matches(i, k), PrimExpr(k.var()), ir::int_imm(-1)), {k});
    }, "scatter_last");
    return te::compute(data.shape(), [&](const std::vector<Var>& i) {
      PrimExpr f = last(std::vector<PrimExpr>(i.begin(), i.end()));
      return select(f >= 0, p.update(i, max(f, 0)), data(std::vector<PrimExpr>(i.begin(), i.end())));
    }, "scatter");
  }
  te::ReduceKind kind = red == "add" ? te::ReduceKind::kSum : red == "max" ? te::ReduceKind::kMax : te::ReduceKind::kMin;
  Tensor acc = te::compute(data.shape(), [&](const std::vector<Var>& i) {
    te::IterVar k = te::reduce_axis(0, p.extent, "k");
    PrimExpr v = select(p.matches(i, k), p.update(i, k), te::reduce_identity(kind, dt));
    return kind == te::ReduceKind::kSum ? te::sum(v, {k}) : kind == te::ReduceKind::kMax ? te::max(v, {k}) : te::min(v, {k});
  }, "scatter_acc");
  return te::compute(data.shape(), [&](const std::vector<Var>& i) {
    std::vector<PrimExpr> e(i.begin(), i.end());
    PrimExpr d = data(e), a = acc(e);
    return kind == te::ReduceKind::kSum ? d + a : kind == te::ReduceKind::kMax ? max(d, a) : min(d, a);
  }, "scatter");
}

std::vector<Tensor> scatter_elements(const graph::CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &ind = in[1], &upd = in[2];
  int axis = graph::ops::normalize_axis(get_int(call.attrs(), "axis", 0), x.ndim());
  // Position of update k for element i: i with axis replaced by k, other dims clamped into indices.
  auto pos = [&](const std::vector<Var>& i, const PrimExpr& k) {
    std::vector<PrimExpr> p;
    for (int d = 0; d < x.ndim(); ++d) p.push_back(d == axis ? clamp(k, 0, ind.shape()[d] - 1) : clamp(i[d], 0, ind.shape()[d] - 1));
    return p;
  };
  ScatterParts parts;
  parts.extent = ind.shape()[axis];
  parts.matches = [&](const std::vector<Var>& i, const PrimExpr& k) {
    PrimExpr m = eq(wrap_index(ind(pos(i, k)), x.shape()[axis]), i[axis]);
    for (int d = 0; d < x.ndim(); ++d)
      if (d != axis) m = m && (i[d] < ind.shape()[d]);
    return m;
  };
  parts.update = [&](const std::vector<Var>& i, const PrimExpr& k) { return upd(pos(i, k)); };
  return {scatter(call, x, parts)};
}

std::vector<Tensor> scatter_nd(const graph::CallNode& call, const std::vector<Tensor>& in) {
  const Tensor &x = in[0], &ind = in[1], &upd = in[2];
  int r = ind.ndim(), q = const_dim(ind.shape().back());
  std::vector<PrimExpr> kdims(ind.shape().begin(), ind.shape().end() - 1);
  auto unravel = [&](PrimExpr k) {
    std::vector<PrimExpr> idx(r - 1);
    for (int d = r - 2; d >= 0; --d) {
      idx[d] = d == 0 ? k : floormod(k, kdims[d]);
      if (d > 0) k = floordiv(k, kdims[d]);
    }
    return idx;
  };
  ScatterParts parts;
  parts.extent = ir::int_imm(1);
  for (const PrimExpr& d : kdims) parts.extent = parts.extent * d;
  parts.matches = [&](const std::vector<Var>& i, const PrimExpr& k) {
    PrimExpr m;
    std::vector<PrimExpr> base = unravel(k);
    for (int j = 0; j < q; ++j) {
      std::vector<PrimExpr> at = base;
      at.push_back(ir::int_imm(j));
      PrimExpr e = eq(wrap_index(ind(at), x.shape()[j]), i[j]);
      m = m.defined() ? (m && e) : e;
    }
    return m.defined() ? m : PrimExpr(ir::make_const(DataType::boolean(), 1));
  };
  parts.update = [&](const std::vector<Var>& i, const PrimExpr& k) {
    std::vector<PrimExpr> at = unravel(k);
    at.insert(at.end(), i.begin() + q, i.end());
    return upd(at);
  };
  return {scatter(call, x, parts)};
}

}  // namespace

void register_gather_scatter_strategies() {
  register_implementation("gather_nd", "cpu", {"gather_nd.cpu", gather_nd, schedule_injective});
  register_implementation("scatter_elements", "cpu", {"scatter_elements.cpu", scatter_elements, schedule_injective});
  register_implementation("scatter_nd", "cpu", {"scatter_nd.cpu", scatter_nd, schedule_injective});
}

}  // namespace anvil::ops
