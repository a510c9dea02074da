// The gather_nd compute and the CPU implementations of gather_nd, scatter_elements and
// scatter_nd (graph/ops/gather_scatter.cc); the scatters are hand kernels (cpu/scatter.h).
#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/graph/ops/op_util.h"
#include <functional>

#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/scatter.h"
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

}  // namespace

void register_gather_scatter_strategies() {
  register_implementation("gather_nd", "cpu", {"gather_nd.cpu", gather_nd, schedule_injective});
  // Scatters: one copy and one ordered pass over the updates (cpu/scatter.h), linear in the sizes.
  OpImplementation elements, nd;
  elements.name = "scatter_elements.cpu";
  elements.kernel = scatter_elements_kernel;
  nd.name = "scatter_nd.cpu";
  nd.kernel = scatter_nd_kernel;
  register_implementation("scatter_elements", "cpu", std::move(elements));
  register_implementation("scatter_nd", "cpu", std::move(nd));
}

}  // namespace anvil::ops
