// Default reduction schedule.
#include "anvil/ops/cpu/schedule_reduce.h"

#include <algorithm>
#include <set>

#include "anvil/ir/expr_functor.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/cpu/vector_width.h"

namespace anvil::ops {
namespace {

// Does some load index its last dimension by one of `reduce_vars`?
class InnermostReduced : public ir::ExprVisitor {
 public:
  explicit InnermostReduced(std::set<const ir::VarNode*> vars) : vars_(std::move(vars)) {}
  bool found = false;
  void visit_(const ir::BufferLoadNode* op) override {
    if (!op->indices().empty())
      if (const auto* v = op->indices().back().as<ir::VarNode>(); v && vars_.count(v)) found = true;
    ir::ExprVisitor::visit_(op);
  }

 private:
  std::set<const ir::VarNode*> vars_;
};

void collect(const te::Tensor& t, std::set<const te::OperationNode*>& seen, std::vector<te::Tensor>& order) {
  if (!seen.insert(t.get()).second) return;
  for (const te::Tensor& in : t->inputs()) collect(in, seen, order);
  order.push_back(t);
}

std::optional<int64_t> const_product(const std::vector<ir::PrimExpr>& dims) {
  int64_t total = 1;
  for (const ir::PrimExpr& d : dims) {
    std::optional<int64_t> c = ir::as_const_int(d);
    if (!c) return std::nullopt;
    total *= *c;
  }
  return total;
}

}  // namespace

void schedule_reduce_stage(te::Schedule& s, const te::Tensor& t, const Target& target) {
  te::Stage& st = s[t];
  std::vector<te::IterVar> data = t.axis(), red = t.reduce_axis();
  std::set<const ir::VarNode*> rvars;
  std::vector<ir::PrimExpr> work = t.shape();
  for (const te::IterVar& k : red) {
    rvars.insert(k.var().get());
    work.push_back(k->dom().extent);
  }
  InnermostReduced finder(rvars);
  finder.visit_expr(t->body());
  std::optional<int64_t> total_work = const_product(work);
  bool parallel = !total_work || *total_work >= kParallelMinElements;
  if (data.empty()) return;  // a full reduction: one serial loop nest
  int lanes = std::max(1, vector_lanes_of(target) * 4 / std::max(1, t.dtype().bits() / 8));
  std::optional<int64_t> last = ir::as_const_int(data.back()->dom().extent);
  bool vectorize = !finder.found && !red.empty() && (!last || *last >= lanes);
  std::vector<te::IterVar> outer(data.begin(), data.end() - (vectorize ? 1 : 0));
  te::IterVar fused;
  if (!outer.empty()) {
    fused = outer[0];
    for (size_t i = 1; i < outer.size(); ++i) fused = st.fuse(fused, outer[i]);
  }
  if (vectorize) {
    auto [vo, vi] = st.split(data.back(), lanes);
    std::vector<te::IterVar> order;
    if (fused.defined()) order.push_back(fused);
    order.push_back(vo);
    order.insert(order.end(), red.begin(), red.end());
    order.push_back(vi);
    st.reorder(order);
    st.vectorize(vi);
    if (parallel) st.parallel(fused.defined() ? fused : vo);
  } else if (parallel && fused.defined()) {
    st.parallel(fused);
  }
}

void schedule_reduce(te::Schedule& s, const std::vector<te::Tensor>& outputs, const Target& target) {
  inline_injective_stages(s, outputs);
  std::set<const te::OperationNode*> seen;
  std::vector<te::Tensor> order;
  for (const te::Tensor& o : outputs) collect(o, seen, order);
  for (const te::Tensor& t : order) {
    if (!t.is_compute()) continue;
    if (!t.reduce_axis().empty()) schedule_reduce_stage(s, t, target);
    else if (std::find_if(outputs.begin(), outputs.end(), [&](const te::Tensor& o) { return o.same_as(t); }) != outputs.end())
      schedule_injective_output(s, t, target);
  }
}

}  // namespace anvil::ops
