// loop_partition pass: peel the part of a loop where a linear condition is decided.
#include "anvil/tir/passes/loop_partition.h"

#include <optional>
#include <unordered_set>

#include "anvil/arith/analyzer.h"
#include "anvil/arith/linear.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

using ir::ExprKind;

bool uses_any(const PrimExpr& e, const std::unordered_set<const ir::VarNode*>& vars) {
  bool found = false;
  struct V : ir::ExprVisitor {
    const std::unordered_set<const ir::VarNode*>* vars;
    bool* found;
    void visit_(const ir::VarNode* op) override {
      if (vars->count(op)) *found = true;
    }
  } v;
  v.vars = &vars;
  v.found = &found;
  v.visit_expr(e);
  return found;
}

// Whether e reads memory (a condition on loaded data is not loop-invariant).
bool has_load(const PrimExpr& e) {
  struct V : ir::ExprVisitor {
    bool found = false;
    void visit_(const ir::BufferLoadNode*) override { found = true; }
  } v;
  v.visit_expr(e);
  return v.found;
}

// Replaces one if node by its then branch.
class TakeThen : public StmtMutator {
 public:
  explicit TakeThen(const IfThenElseNode* target) : target_(target) {}
  using StmtMutator::mutate_;
  Stmt mutate_(const IfThenElseNode* op) override {
    if (op == target_) return mutate_stmt(op->then_case());
    return StmtMutator::mutate_(op);
  }

 private:
  const IfThenElseNode* target_;
};

struct Candidate {
  const IfThenElseNode* node;
  std::vector<const ForNode*> inner;  // loops between the partitioned loop and the if
  std::unordered_set<const ir::VarNode*> defined;  // vars defined between them
};

void find_ifs(const Stmt& s, std::vector<const ForNode*>* path, std::unordered_set<const ir::VarNode*>* defined,
              std::vector<Candidate>* out) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kFor: {
      auto* f = s.as<ForNode>();
      path->push_back(f);
      defined->insert(f->loop_var().get());
      find_ifs(f->body(), path, defined, out);
      path->pop_back();
      return;
    }
    case StmtKind::kIfThenElse: {
      auto* i = s.as<IfThenElseNode>();
      out->push_back({i, *path, *defined});
      find_ifs(i->then_case(), path, defined, out);
      find_ifs(i->else_case(), path, defined, out);
      return;
    }
    case StmtKind::kSeqStmt:
      for (const auto& x : s.as<SeqStmtNode>()->seq()) find_ifs(x, path, defined, out);
      return;
    case StmtKind::kLetStmt:
      defined->insert(s.as<LetStmtNode>()->var().get());
      find_ifs(s.as<LetStmtNode>()->body(), path, defined, out);
      return;
    case StmtKind::kAllocate:
      defined->insert(s.as<AllocateNode>()->buffer_var().get());
      find_ifs(s.as<AllocateNode>()->body(), path, defined, out);
      return;
    case StmtKind::kAttrStmt: find_ifs(s.as<AttrStmtNode>()->body(), path, defined, out); return;
    case StmtKind::kAssertStmt: find_ifs(s.as<AssertStmtNode>()->body(), path, defined, out); return;
    default: return;
  }
}

class Partitioner : public StmtMutator {
 public:
  using StmtMutator::mutate_;

  Stmt mutate_(const ForNode* op) override {
    if (op->for_kind() != ForKind::kThreadBinding) {
      if (auto r = try_partition(op)) return *r;
    }
    auto scope = ana_.bind(op->loop_var(), op->min(), op->extent());
    return StmtMutator::mutate_(op);
  }

 private:
  // The loop split, or nullopt when no if inside qualifies.
  std::optional<Stmt> try_partition(const ForNode* op) {
    const Var& v = op->loop_var();
    if (!arith::is_linear_type(v.dtype())) return std::nullopt;
    std::vector<const ForNode*> path;
    std::unordered_set<const ir::VarNode*> defined;
    std::vector<Candidate> cands;
    find_ifs(op->body(), &path, &defined, &cands);
    for (const auto& c : cands) {
      if (done_.count(c.node)) continue;
      std::optional<Stmt> r = split(op, c);
      if (r) return r;
    }
    return std::nullopt;
  }

  std::optional<Stmt> split(const ForNode* op, const Candidate& cand) {
    const Var& v = op->loop_var();
    PrimExpr cond = ana_.simplify(cand.node->cond());
    PrimExpr d;  // cond <=> d < 0
    auto diff = [&](const PrimExpr& a, const PrimExpr& b, int64_t adj) -> PrimExpr {
      if (!arith::is_linear_type(a.dtype()) || a.dtype() != v.dtype()) return PrimExpr();
      return ana_.simplify(a - b + ir::IntImmNode::make(a.dtype(), adj));
    };
    if (auto* n = cond.as<ir::LTNode>()) d = diff(n->a(), n->b(), 0);
    if (auto* n = cond.as<ir::LENode>()) d = diff(n->a(), n->b(), -1);
    if (auto* n = cond.as<ir::GTNode>()) d = diff(n->b(), n->a(), 0);
    if (auto* n = cond.as<ir::GENode>()) d = diff(n->b(), n->a(), -1);
    if (!d.defined() || has_load(d)) return std::nullopt;
    arith::Linear L = arith::to_linear(d);
    int64_t coeff = 0;
    arith::Linear rest{L.t, {}, L.c};
    std::unordered_set<const ir::VarNode*> just_v{v.get()};
    for (const auto& t : L.terms) {
      if (t.e.same_as(v)) {
        coeff = t.k;
      } else {
        if (uses_any(t.e, just_v)) return std::nullopt;
        arith::add_term(&rest, t.e, t.k);
      }
    }
    if (coeff == 0) return std::nullopt;
    // Bound the rest over the loops between v and the if.
    arith::Analyzer inner = ana_;
    std::vector<arith::BindScope> scopes;
    for (const ForNode* f : cand.inner) {
      if (uses_any(f->min(), just_v) || uses_any(f->extent(), just_v)) return std::nullopt;
      scopes.push_back(inner.bind(f->loop_var(), f->min(), f->extent()));
    }
    PrimExpr r = arith::from_linear(rest);
    if (uses_any(r, cand.defined)) {
      r = inner.symbolic_bound(r, /*upper=*/true);
      if (!r.defined() || uses_any(r, cand.defined)) return std::nullopt;
    }
    // coeff * v + r < 0 for every inner value.
    DataType t = v.dtype();
    PrimExpr c = ir::IntImmNode::make(t, coeff > 0 ? coeff : -coeff);
    bool prefix_true = coeff > 0;
    PrimExpr p = prefix_true ? ir::floordiv(c - r - 1, c) : ir::floordiv(r, c) + 1;
    PrimExpr lo = op->min(), end = ana_.simplify(op->min() + op->extent());
    p = ana_.simplify(ir::min(ir::max(p, lo), end));
    done_.insert(cand.node);
    Stmt with_cond = op->body();
    Stmt without = TakeThen(cand.node).mutate_stmt(op->body());
    Stmt first_body = prefix_true ? without : with_cond;
    Stmt second_body = prefix_true ? with_cond : without;
    std::vector<Stmt> parts;
    auto emit = [&](const PrimExpr& from, const PrimExpr& to, const Stmt& body) {
      PrimExpr ext = ana_.simplify(to - from);
      if (auto k = ir::as_const_int(ext); k && *k <= 0) return;
      Stmt loop = ForNode::make(v, from, ext, op->for_kind(), body, op->thread_tag(), op->annotations());
      auto scope = ana_.bind(v, from, ext);
      // Each part may split again at another if on v (a padding's two borders, nested ifs of
      // select_to_if); the depth bounds the copies.
      if (depth_ < kMaxDepth) {
        ++depth_;
        parts.push_back(mutate_(loop.as<ForNode>()));
        --depth_;
      } else {
        parts.push_back(StmtMutator::mutate_(loop.as<ForNode>()));
      }
    };
    emit(lo, p, first_body);
    emit(p, end, second_body);
    // Used up only inside this loop's parts: a copy of the same if in a sibling part of an
    // outer loop (partitioned before) may split its own loop.
    done_.erase(cand.node);
    return seq(parts);
  }

  static constexpr int kMaxDepth = 4;
  arith::Analyzer ana_;
  std::unordered_set<const IfThenElseNode*> done_;  // ifs whose split is being emitted
  int depth_ = 0;
};

}  // namespace

Stmt loop_partition(const Stmt& s) { return Partitioner().mutate_stmt(s); }

PrimFunc loop_partition(const PrimFunc& f) { return Partitioner().mutate_func(f); }

}  // namespace anvil::tir::passes
