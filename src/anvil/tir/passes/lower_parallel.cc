// lower_parallel: see lower_parallel.h.
#include "anvil/tir/passes/lower_parallel.h"

#include "anvil/ir/expr_ops.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::tir::passes {
namespace {

class ParallelLowerer : public StmtMutator {
 public:
  using StmtMutator::mutate_;

  Stmt mutate_(const ForNode* op) override {
    if (op->for_kind() != ForKind::kParallel) return StmtMutator::mutate_(op);
    if (depth_ > 0) {
      // Nested: serial.
      Stmt body = mutate_stmt(op->body());
      return ForNode::make(op->loop_var(), op->min(), op->extent(), ForKind::kSerial, body, "", op->annotations());
    }
    ++depth_;
    Stmt body = mutate_stmt(op->body());
    --depth_;
    auto min = ir::as_const_int(op->min());
    if (min && *min == 0) {
      if (body.same_as(op->body())) return ref_of(op);
      return ForNode::make(op->loop_var(), op->min(), op->extent(), op->for_kind(), body, "", op->annotations());
    }
    Var v(op->loop_var().name(), op->loop_var().dtype());
    ir::VarMap map;
    map.emplace(op->loop_var(), ir::add(v, op->min()));
    body = substitute(body, map);
    return ForNode::make(v, ir::make_zero(v.dtype()), op->extent(), ForKind::kParallel, body, "", op->annotations());
  }

 private:
  int depth_ = 0;
};

}  // namespace

Stmt lower_parallel(const Stmt& body) { return ParallelLowerer().mutate_stmt(body); }

PrimFunc lower_parallel(const PrimFunc& f) { return f.with_body(lower_parallel(f->body())); }

}  // namespace anvil::tir::passes
