// unroll pass: explicit unrolling of constant-extent loops.
#include "anvil/tir/passes/unroll.h"

#include "anvil/arith/analyzer.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/tir/passes/simplify.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {

namespace {

// Statements in s when fully unrolled; -1 when it holds something that blocks auto-unrolling.
int64_t unrolled_steps(const Stmt& s) {
  if (!s.defined()) return 0;
  switch (s.kind()) {
    case StmtKind::kFor: {
      auto* f = s.as<ForNode>();
      auto ext = ir::as_const_int(f->extent());
      if (!ext || (f->for_kind() != ForKind::kSerial && f->for_kind() != ForKind::kUnrolled)) return -1;
      int64_t body = unrolled_steps(f->body());
      if (body < 0) return -1;
      return std::max<int64_t>(*ext, 0) * body;
    }
    case StmtKind::kSeqStmt: {
      int64_t n = 0;
      for (const auto& x : s.as<SeqStmtNode>()->seq()) {
        int64_t k = unrolled_steps(x);
        if (k < 0) return -1;
        n += k;
      }
      return n;
    }
    case StmtKind::kIfThenElse: {
      auto* i = s.as<IfThenElseNode>();
      int64_t a = unrolled_steps(i->then_case()), b = unrolled_steps(i->else_case());
      return a < 0 || b < 0 ? -1 : 1 + a + b;
    }
    case StmtKind::kLetStmt: {
      int64_t b = unrolled_steps(s.as<LetStmtNode>()->body());
      return b < 0 ? -1 : 1 + b;
    }
    case StmtKind::kAttrStmt: {
      int64_t b = unrolled_steps(s.as<AttrStmtNode>()->body());
      return b < 0 ? -1 : 1 + b;
    }
    case StmtKind::kAssertStmt: {
      int64_t b = unrolled_steps(s.as<AssertStmtNode>()->body());
      return b < 0 ? -1 : 1 + b;
    }
    case StmtKind::kAllocate: return -1;
    default: return 1;
  }
}

class Unroller : public StmtMutator {
 public:
  explicit Unroller(UnrollOptions options) : options_(options) {}
  using StmtMutator::mutate_;

  Stmt mutate_(const ForNode* op) override {
    Stmt r = StmtMutator::mutate_(op);  // inner loops first
    auto* f = r.as<ForNode>();
    if (!f) return r;
    auto ext = ir::as_const_int(f->extent());
    bool marked = f->for_kind() == ForKind::kUnrolled;
    if (marked && !ext)
      return ForNode::make(f->loop_var(), f->min(), f->extent(), ForKind::kSerial, f->body(), "", f->annotations());
    bool automatic = !marked && f->for_kind() == ForKind::kSerial && ext && options_.max_step > 0 &&
                     unrolled_steps(r) >= 0 && unrolled_steps(r) <= options_.max_step;
    if (!(marked || automatic)) return r;
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < *ext; ++k) {
      PrimExpr value = ir::IntImmNode::make(f->loop_var().dtype(), k);
      if (!ir::as_const_int(f->min()) || *ir::as_const_int(f->min()) != 0) value = f->min() + value;
      ir::VarMap map{{f->loop_var(), value}};
      arith::Analyzer ana;
      copies.push_back(simplify(substitute(f->body(), map), &ana));
    }
    return seq(copies);
  }

 private:
  UnrollOptions options_;
};

}  // namespace

Stmt unroll(const Stmt& s, const UnrollOptions& options) { return Unroller(options).mutate_stmt(s); }

PrimFunc unroll(const PrimFunc& f, const UnrollOptions& options) { return Unroller(options).mutate_func(f); }

}  // namespace anvil::tir::passes
