// Bound inference: the region of each stage its readers need, then the extents of the stage's
// loops and the root indices in terms of them.
#include <algorithm>
#include <unordered_set>

#include "anvil/base/error.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/structural_equal.h"
#include "anvil/te/lower_state.h"

namespace anvil::te {
namespace {

using ir::VarNode;

// Loads of `buffer` in e: their index lists.
std::vector<std::vector<PrimExpr>> accesses(const PrimExpr& e, const ir::BufferNode* buffer) {
  struct Finder : ir::ExprVisitor {
    const ir::BufferNode* buffer;
    std::vector<std::vector<PrimExpr>> found;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::BufferLoadNode* op) override {
      ir::ExprVisitor::visit_(op);
      if (op->buffer().get() == buffer) found.push_back(op->indices());
    }
  } f;
  f.buffer = buffer;
  f.visit_expr(e);
  return std::move(f.found);
}

bool const_divides(const PrimExpr& extent, const PrimExpr& factor) {
  auto e = ir::as_const_int(extent), f = ir::as_const_int(factor);
  return e && f && *f > 0 && *e % *f == 0;
}

void infer_region(LowerState* state, int i) {
  StageInfo& info = state->stages[i];
  const Tensor& op = info.stage->op;
  const auto& shape = op.shape();
  info.region.clear();
  info.unclamped_extent.clear();
  if (info.in_args || info.stage->is_output || info.readers.empty()) {
    for (const PrimExpr& s : shape) info.region.push_back(Range{ir::int_imm(0, s.dtype()), s});
    info.unclamped_extent = shape;
    return;
  }
  RelaxSpec spec = state->loops;
  spec.keep = state->enclosing_vars(i);
  std::vector<std::optional<Interval>> u(shape.size());
  std::vector<bool> whole(shape.size(), false), from_start(shape.size(), false), to_end(shape.size(), false);
  for (int r : info.readers) {
    const StageInfo& reader = state->stages[r];
    for (const auto& idx : accesses(reader.body, op->buffer().get())) {
      for (size_t d = 0; d < shape.size(); ++d) {
        auto iv = eval_interval(ir::substitute(idx[d], reader.root_value), spec);
        if (!iv) {
          whole[d] = true;
          continue;
        }
        // A reader that needs the first / last element fixes that end of the clamped region.
        if (auto c = ir::as_const_int(iv->lo); c && *c <= 0) from_start[d] = true;
        if (ir::structural_equal(iv->hi, fold_sub(shape[d], ir::int_imm(1, shape[d].dtype())))) to_end[d] = true;
        if (!u[d]) {
          u[d] = iv;
        } else {
          u[d] = Interval{fold_min(u[d]->lo, iv->lo), fold_max(u[d]->hi, iv->hi)};
        }
      }
    }
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    PrimExpr zero = ir::int_imm(0, shape[d].dtype());
    if (whole[d] || !u[d]) {
      info.region.push_back(Range{zero, shape[d]});
      info.unclamped_extent.push_back(shape[d]);
      continue;
    }
    // The enclosing loop vars the bounds mention lie in their loops' ranges: simplify with them.
    const arith::Analyzer& ana = state->analyzer;
    PrimExpr lo = ana.simplify(u[d]->lo), hi = ana.simplify(u[d]->hi);
    info.unclamped_extent.push_back(ana.simplify(fold_add(fold_sub(hi, lo), ir::int_imm(1, lo.dtype()))));
    PrimExpr last = fold_sub(shape[d], ir::int_imm(1, shape[d].dtype()));
    if (from_start[d]) lo = zero;
    if (to_end[d]) hi = last;
    // Clamp to the tensor only where the loops' constant ranges do not already keep it inside.
    auto whole_lo = eval_interval(lo, state->loops), whole_hi = eval_interval(hi, state->loops);
    auto clo = whole_lo ? ir::as_const_int(whole_lo->lo) : std::nullopt;
    if (!clo || *clo < 0) lo = fold_max(lo, zero);
    auto chi = whole_hi ? ir::as_const_int(whole_hi->hi) : std::nullopt;
    auto clast = ir::as_const_int(last);
    bool inside = (chi && clast && *chi <= *clast) || (whole_hi && ir::structural_equal(whole_hi->hi, last));
    if (!inside) hi = fold_min(hi, last);
    info.region.push_back(
        Range{ana.simplify(lo), ana.simplify(fold_add(fold_sub(hi, lo), ir::int_imm(1, lo.dtype())))});
  }
}

void derive_loops(LowerState* state, int i) {
  StageInfo& info = state->stages[i];
  const StageNode* st = info.stage.get();
  const Tensor& op = st->op;
  // Root extents, and which roots each axis derives from.
  std::unordered_map<const IterVarNode*, std::vector<const IterVarNode*>> roots;
  for (size_t d = 0; d < op->axis().size(); ++d) {
    info.extent[op->axis()[d].get()] = info.region[d].extent;
    roots[op->axis()[d].get()] = {op->axis()[d].get()};
  }
  for (const IterVar& k : op->reduce_axis()) {
    info.extent[k.get()] = k->dom().extent;
    roots[k.get()] = {k.get()};
  }
  std::unordered_set<const IterVarNode*> needs_guard;
  for (const IterRelation& rel : st->relations) {
    if (rel.kind == IterRelation::kSplit) {
      const SplitRelation& s = rel.split;
      PrimExpr e = info.extent.at(s.parent.get());
      if (s.by_nparts) {
        info.extent[s.outer.get()] = s.factor;
        info.extent[s.inner.get()] = fold_ceildiv(e, s.factor);
      } else {
        info.extent[s.outer.get()] = fold_ceildiv(e, s.factor);
        info.extent[s.inner.get()] = s.factor;
      }
      if (!const_divides(e, s.factor))
        for (auto* r : roots[s.parent.get()]) needs_guard.insert(r);
      roots[s.outer.get()] = roots[s.inner.get()] = roots[s.parent.get()];
    } else {
      const FuseRelation& f = rel.fuse;
      info.extent[f.fused.get()] = fold_mul(info.extent.at(f.outer.get()), info.extent.at(f.inner.get()));
      auto r = roots[f.outer.get()];
      for (auto* x : roots[f.inner.get()]) r.push_back(x);
      roots[f.fused.get()] = r;
    }
  }
  // Values, from the leaves up.
  std::unordered_map<const IterVarNode*, PrimExpr> value;
  for (const IterVar& leaf : st->leaf_iter_vars) value[leaf.get()] = leaf.var();
  for (auto it = st->relations.rbegin(); it != st->relations.rend(); ++it) {
    if (it->kind == IterRelation::kSplit) {
      const SplitRelation& s = it->split;
      value[s.parent.get()] =
          fold_add(fold_mul(value.at(s.outer.get()), info.extent.at(s.inner.get())), value.at(s.inner.get()));
    } else {
      const FuseRelation& f = it->fuse;
      PrimExpr fused = value.at(f.fused.get()), inner_ext = info.extent.at(f.inner.get());
      value[f.outer.get()] = fold_floordiv(fused, inner_ext);
      value[f.inner.get()] = fold_floormod(fused, inner_ext);
    }
  }
  info.rel.clear();
  for (size_t d = 0; d < op->axis().size(); ++d) {
    const IterVar& a = op->axis()[d];
    info.rel.push_back(value.at(a.get()));
    info.root_value[a.var()] = fold_add(info.region[d].min, value.at(a.get()));
  }
  for (const IterVar& k : op->reduce_axis()) info.root_value[k.var()] = fold_add(k->dom().min, value.at(k.get()));
  // Guards: under the innermost leaf that the root derives from.
  for (const IterVarNode* r : needs_guard) {
    int pos = -1;
    for (size_t l = 0; l < st->leaf_iter_vars.size(); ++l)
      for (auto* x : roots[st->leaf_iter_vars[l].get()])
        if (x == r) pos = static_cast<int>(l);
    PrimExpr cond = value.at(r) < info.extent.at(r);
    info.guards.push_back(StageInfo::Guard{pos, r->iter_kind() == IterKind::kReduce, cond});
  }
  std::sort(info.guards.begin(), info.guards.end(),
            [](const auto& a, const auto& b) { return a.position < b.position; });
  for (const IterVar& leaf : st->leaf_iter_vars) {
    // For relaxing readers' indices: a clamped extent min(i0 + 3, m - 1) - i0 + 1 as min(4, m - i0),
    // so that relaxing i0 does not count it twice.
    state->loops.extent[leaf.var().get()] = add_into_min(state->analyzer, state->analyzer.simplify(info.extent.at(leaf.get())));
    state->bindings.push_back(
        state->analyzer.bind(leaf.var(), ir::int_imm(0, leaf.var().dtype()), info.extent.at(leaf.get())));
  }
}

}  // namespace

bool is_cooperative_shared(const StageNode* st) {
  if (st->scope != "shared") return false;
  for (const IterVar& leaf : st->leaf_iter_vars) {
    const IterAttr* a = st->find_attr(leaf);
    if (a && a->thread_tag.rfind("threadIdx.", 0) == 0) return true;
  }
  return false;
}

std::unordered_set<const ir::VarNode*> LowerState::enclosing_vars(int i) {
  std::unordered_set<const ir::VarNode*> out;
  const StageNode* st = stages[i].stage.get();
  const bool relax_threads = is_cooperative_shared(st);
  while (st->attach == AttachKind::kScope) {
    auto parent = st->attach_stage.lock();
    ANVIL_ICHECK(parent, "attach stage expired");
    int pos = parent->leaf_index(st->attach_ivar);
    ANVIL_ICHECK(pos >= 0, "attach axis is not a leaf");
    for (int l = 0; l <= pos; ++l) {
      const IterVar& leaf = parent->leaf_iter_vars[l];
      const IterAttr* a = parent->find_attr(leaf);
      if (relax_threads && a && a->thread_tag.rfind("threadIdx.", 0) == 0) continue;
      out.insert(leaf.var().get());
    }
    st = parent.get();
  }
  return out;
}

void infer_bounds(LowerState* state) {
  for (int i = static_cast<int>(state->stages.size()) - 1; i >= 0; --i) {
    StageInfo& info = state->stages[i];
    if (info.is_placeholder || info.is_inline) continue;
    infer_region(state, i);
    derive_loops(state, i);
  }
}

}  // namespace anvil::te
