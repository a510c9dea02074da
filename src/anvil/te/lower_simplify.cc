// The last step of te::lower: the arith simplifier over the generated index arithmetic, with
// every loop variable's range known (so divisible split guards fold to True and disappear,
// clamped regions fold to constants, indices collect like terms). Only integer expressions are
// touched: loop extents, load/store indices, allocation extents, guard conditions.
#include "anvil/arith/analyzer.h"
#include "anvil/te/lower_state.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::te {
namespace {

using tir::Stmt;

class IndexSimplifier : public tir::StmtMutator {
 public:
  using tir::StmtMutator::mutate_;

  Stmt mutate_(const tir::ForNode* op) override {
    PrimExpr min = ana_.simplify(op->min()), extent = ana_.simplify(op->extent());
    auto scope = ana_.bind(op->loop_var(), min, extent);
    Stmt body = mutate_stmt(op->body());
    if (min.same_as(op->min()) && extent.same_as(op->extent()) && body.same_as(op->body())) return tir::ref_of(op);
    return tir::ForNode::make(op->loop_var(), min, extent, op->for_kind(), body, op->thread_tag(), op->annotations());
  }

  Stmt mutate_(const tir::BufferStoreNode* op) override {
    PrimExpr value = mutate_expr(op->value());
    std::vector<PrimExpr> idx;
    bool changed = !value.same_as(op->value());
    for (const PrimExpr& i : op->indices()) {
      idx.push_back(ana_.simplify(i));
      changed = changed || !idx.back().same_as(i);
    }
    if (!changed) return tir::ref_of(op);
    return tir::BufferStoreNode::make(op->buffer(), value, idx);
  }

  PrimExpr mutate_(const ir::BufferLoadNode* op) override {
    std::vector<PrimExpr> idx;
    bool changed = false;
    for (const PrimExpr& i : op->indices()) {
      idx.push_back(ana_.simplify(mutate_expr(i)));
      changed = changed || !idx.back().same_as(i);
    }
    if (!changed) return ir::ref_of(op);
    return ir::BufferLoadNode::make(op->buffer(), idx);
  }

  Stmt mutate_(const tir::AllocateNode* op) override {
    std::vector<PrimExpr> ext;
    for (const PrimExpr& e : op->extents()) ext.push_back(ana_.simplify(e));
    Stmt body = mutate_stmt(op->body());
    return tir::AllocateNode::make(op->buffer_var(), op->dtype(), ext, op->scope(), body);
  }

  Stmt mutate_(const tir::IfThenElseNode* op) override {
    PrimExpr cond = ana_.simplify(mutate_expr(op->cond()));
    if (auto c = ir::as_const_int(cond)) {
      if (*c) return mutate_stmt(op->then_case());
      return op->else_case().defined() ? mutate_stmt(op->else_case()) : tir::evaluate(0);
    }
    Stmt then_case;
    {
      auto scope = ana_.assume(cond);
      then_case = mutate_stmt(op->then_case());
    }
    Stmt else_case = mutate_stmt(op->else_case());
    return tir::IfThenElseNode::make(cond, then_case, else_case);
  }

 private:
  arith::Analyzer ana_;
};

}  // namespace

tir::Stmt simplify_indices(const tir::Stmt& s) { return IndexSimplifier().mutate_stmt(s); }

// (see lower_state.h)
PrimExpr add_into_min(const arith::Analyzer& ana, const PrimExpr& e) {
  auto* add = e.as<ir::AddNode>();
  auto* sub = e.as<ir::SubNode>();
  if (!add && !sub) return e;
  PrimExpr x = add_into_min(ana, add ? add->a() : sub->a());
  PrimExpr y = add ? add_into_min(ana, add->b()) : sub->b();
  const ir::MinNode* m = x.as<ir::MinNode>();
  PrimExpr other = y;
  if (!m && add) m = y.as<ir::MinNode>(), other = x;
  if (!m) return e;
  auto arm = [&](const PrimExpr& a) { return add_into_min(ana, ana.simplify(add ? a + other : a - other)); };
  return ir::min(arm(m->a()), arm(m->b()));
}

}  // namespace anvil::te
