// Schedule primitives that rewrite the dataflow: cache_read and cache_write.
#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/te/schedule.h"

namespace anvil::te {
namespace {

// Loads of `from` become loads of `to` at the same indices.
PrimExpr replace_loads(const PrimExpr& e, const Tensor& from, const Tensor& to) {
  struct Replacer : ir::ExprMutator {
    const Tensor *from, *to;
    using ir::ExprMutator::mutate_;
    PrimExpr mutate_(const ir::BufferLoadNode* op) override {
      PrimExpr e = ir::ExprMutator::mutate_(op);
      auto* load = e.as<ir::BufferLoadNode>();
      if (load->buffer().same_as((*from)->buffer())) return (*to)(load->indices());
      return e;
    }
  } r;
  r.from = &from;
  r.to = &to;
  return r.mutate_expr(e);
}

std::vector<IterVar> fresh_axes(const std::vector<IterVar>& like) {
  std::vector<IterVar> out;
  for (const IterVar& a : like) out.push_back(IterVar::make(Var(a->name(), a.var().dtype()), a->dom(), a->iter_kind()));
  return out;
}

std::vector<IterVar> plain_axes(const std::vector<PrimExpr>& shape) {
  std::vector<IterVar> out;
  for (size_t d = 0; d < shape.size(); ++d) {
    PrimExpr ext = shape[d].dtype() == DataType::int32() ? shape[d] : ir::cast(DataType::int32(), shape[d]);
    out.push_back(IterVar::make(Var("ax" + std::to_string(d)), Range{0, ext}, IterKind::kDataPar));
  }
  return out;
}

std::vector<PrimExpr> vars_of(const std::vector<IterVar>& axes) {
  std::vector<PrimExpr> out;
  for (const IterVar& a : axes) out.push_back(a.var());
  return out;
}

size_t position_of(const ScheduleNode* s, const StageNode* st) {
  for (size_t i = 0; i < s->stages.size(); ++i)
    if (s->stages[i].get() == st) return i;
  ANVIL_ICHECK(false, "stage not in its schedule");
  return 0;
}

std::shared_ptr<StageNode> new_stage(ScheduleNode* s, const Tensor& op, const std::string& scope) {
  auto st = std::make_shared<StageNode>();
  st->op = op;
  st->origin_op = op;
  st->schedule = s;
  st->all_iter_vars = op->axis();
  for (const IterVar& k : op->reduce_axis()) st->all_iter_vars.push_back(k);
  st->leaf_iter_vars = st->all_iter_vars;
  st->scope = scope;
  return st;
}

void check_scope(const std::string& what, const std::string& scope) {
  if (!tir::is_valid_storage_scope(scope))
    value_error(what, ": storage scope '", scope, "' is not one of global, shared, shared.dyn, local, warp");
}

}  // namespace

Tensor Schedule::cache_read(const Tensor& tensor, const std::string& scope, const std::vector<Tensor>& readers) {
  ScheduleNode* s = get();
  if (!tensor.defined()) value_error("cache_read: undefined tensor");
  std::string what = "cache_read of '" + tensor.name() + "'";
  check_scope(what, scope);
  if (readers.empty()) value_error(what, ": no readers given");
  std::vector<Stage> reader_stages;
  for (const Tensor& r : readers) {
    Stage& rs = s->stage_of(r);
    bool reads = false;
    for (const Tensor& in : rs->op->inputs())
      if (in->buffer().same_as(tensor->buffer())) reads = true;
    if (!reads) value_error(what, ": ", rs->describe(), " does not read '", tensor.name(), "'");
    reader_stages.push_back(rs);
  }
  std::vector<IterVar> axes = plain_axes(tensor.shape());
  Tensor cache = Tensor::make_compute(tensor.name() + "." + scope, tensor.dtype(), axes, {}, tensor(vars_of(axes)),
                                      ReduceKind::kNone, {tensor});
  // Insert right before the first reader.
  size_t pos = s->stages.size();
  for (const Stage& rs : reader_stages) pos = std::min(pos, position_of(s, rs.get()));
  s->stages.insert(s->stages.begin() + static_cast<long>(pos), Stage(new_stage(s, cache, scope)));
  for (Stage& rs : reader_stages) {
    const Tensor& old = rs->op;
    std::vector<Tensor> inputs;
    for (const Tensor& in : old->inputs()) inputs.push_back(in->buffer().same_as(tensor->buffer()) ? cache : in);
    rs->op = Tensor::make_compute(old.name(), old.dtype(), old->axis(), old->reduce_axis(),
                                  replace_loads(old->body(), tensor, cache), old->reduce_kind(), inputs, old->buffer());
  }
  return cache;
}

Tensor Schedule::cache_write(const Tensor& tensor, const std::string& scope) {
  ScheduleNode* s = get();
  Stage& st = s->stage_of(tensor);
  std::string what = "cache_write of '" + tensor.name() + "'";
  check_scope(what, scope);
  const Tensor old = st->op;
  if (!old.is_compute()) value_error(what, ": a placeholder cannot be cached for writing");
  if (!st->relations.empty() || !st->iter_attrs.empty() || st->attach != AttachKind::kRoot)
    value_error(what, ": ", st->describe(), " was already scheduled; call cache_write before other primitives on it");
  std::vector<IterVar> axes = fresh_axes(old->axis());
  ir::VarMap remap;
  for (size_t d = 0; d < axes.size(); ++d) remap[old->axis()[d].var()] = axes[d].var();
  Tensor cache = Tensor::make_compute(old.name() + "." + scope, old.dtype(), axes, old->reduce_axis(),
                                      ir::substitute(old->body(), remap), old->reduce_kind(), old->inputs());
  Tensor copy = Tensor::make_compute(old.name(), old.dtype(), old->axis(), {}, cache(vars_of(old->axis())),
                                     ReduceKind::kNone, {cache}, old->buffer());
  size_t pos = position_of(s, st.get());
  st->op = copy;
  st->all_iter_vars = copy->axis();
  st->leaf_iter_vars = copy->axis();
  s->stages.insert(s->stages.begin() + static_cast<long>(pos), Stage(new_stage(s, cache, scope)));
  return cache;
}

}  // namespace anvil::te
