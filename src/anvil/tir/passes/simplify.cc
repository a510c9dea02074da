// simplify pass: arithmetic simplification with loop ranges, if conditions and lets in scope.
#include "anvil/tir/passes/simplify.h"

#include <unordered_set>
#include <vector>

#include "anvil/arith/simplify.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

bool is_no_op(const Stmt& s) {
  auto* e = s.as<EvaluateNode>();
  return e && (e->value().as<ir::IntImmNode>() || e->value().as<ir::FloatImmNode>());
}

class StmtSimplifier : public StmtMutator {
 public:
  explicit StmtSimplifier(arith::Analyzer* ana) : ana_(ana) {}
  using StmtMutator::mutate_;

  PrimExpr mutate_expr(const PrimExpr& e) override { return e.defined() ? ana_->simplify(e) : e; }

  Stmt mutate_(const ForNode* op) override {
    PrimExpr min = mutate_expr(op->min()), extent = mutate_expr(op->extent());
    auto ext = ir::as_const_int(extent);
    if (ext && *ext <= 0) return evaluate(0);
    if (ext && *ext == 1 && op->for_kind() != ForKind::kThreadBinding) {
      ir::VarMap map{{op->loop_var(), min}};
      return mutate_stmt(substitute(op->body(), map));
    }
    Stmt body;
    {
      auto scope = ana_->bind(op->loop_var(), min, extent);
      body = mutate_stmt(op->body());
    }
    if (min.same_as(op->min()) && extent.same_as(op->extent()) && body.same_as(op->body())) return ref_of(op);
    return ForNode::make(op->loop_var(), min, extent, op->for_kind(), body, op->thread_tag(), op->annotations());
  }

  Stmt mutate_(const IfThenElseNode* op) override {
    PrimExpr cond = mutate_expr(op->cond());
    if (auto c = ir::as_const_int(cond)) {
      if (*c) return mutate_stmt(op->then_case());
      return op->else_case().defined() ? mutate_stmt(op->else_case()) : evaluate(0);
    }
    Stmt then_case, else_case;
    {
      auto scope = ana_->assume(cond);
      then_case = mutate_stmt(op->then_case());
    }
    if (op->else_case().defined()) {
      auto scope = ana_->assume(ana_->simplify(ir::logical_not(cond)));
      else_case = mutate_stmt(op->else_case());
    }
    if (cond.same_as(op->cond()) && then_case.same_as(op->then_case()) && else_case.same_as(op->else_case()))
      return ref_of(op);
    return IfThenElseNode::make(cond, then_case, else_case);
  }

  Stmt mutate_(const LetStmtNode* op) override {
    PrimExpr value = mutate_expr(op->value());
    if (value.as<ir::IntImmNode>() || value.as<ir::FloatImmNode>() || value.as<ir::VarNode>()) {
      ir::VarMap map{{op->var(), value}};
      return mutate_stmt(substitute(op->body(), map));
    }
    Stmt body;
    {
      auto scope = ana_->bind_value(op->var(), value);
      body = mutate_stmt(op->body());
    }
    if (value.same_as(op->value()) && body.same_as(op->body())) return ref_of(op);
    return LetStmtNode::make(op->var(), value, body);
  }

  Stmt mutate_(const SeqStmtNode* op) override {
    Stmt r = StmtMutator::mutate_(op);
    auto* s = r.as<SeqStmtNode>();
    if (!s) return r;
    bool flat = true;
    for (const auto& x : s->seq()) flat &= !x.as<SeqStmtNode>() && !is_no_op(x);
    if (flat) return r;
    std::vector<Stmt> kept;
    for (const auto& x : s->seq())
      if (!is_no_op(x)) kept.push_back(x);
    return seq(kept);
  }

 private:
  arith::Analyzer* ana_;
};

}  // namespace

Stmt simplify(const Stmt& s, arith::Analyzer* analyzer) { return StmtSimplifier(analyzer).mutate_stmt(s); }

PrimFunc simplify(const PrimFunc& f) {
  arith::Analyzer ana;
  // A dimension of a parameter buffer is a tensor's extent at run time, so >= 0, also when its
  // var is a plain te.var rather than a size var (not a var that is itself a scalar parameter,
  // which the caller passes). Loop partitioning's clamps such as max(n // 8, 0) then fold away.
  std::unordered_set<const ir::VarNode*> scalars;
  for (const Var& p : f->params()) scalars.insert(p.get());
  std::vector<arith::BindScope> shape_bounds;
  for (const Var& p : f->params()) {
    Buffer b = f->buffer_of(p);
    if (!b.defined()) continue;
    for (const PrimExpr& d : b->shape()) {
      auto* v = d.as<ir::VarNode>();
      if (!v || v->is_size_var() || scalars.count(v) || !v->dtype().is_int() || v->dtype().lanes() != 1 ||
          ana.lookup(Var(v)))
        continue;
      shape_bounds.push_back(ana.bind(Var(v), {0, arith::ConstIntBound::of_dtype(v->dtype()).max}));
    }
  }
  return StmtSimplifier(&ana).mutate_func(f);
}

}  // namespace anvil::tir::passes
