// Statement visitor and copy-on-write mutator (extending the expression ones, so one class
// walks a whole PrimFunc body), and var substitution in statements.
//
// StmtVisitor::visit_stmt(s) dispatches to visit_(const XNode*); defaults visit every child
// statement and expression (For: min, extent, annotations, body; BufferStore: value, indices;
// Allocate: extents, body; AttrStmt: node, value, body; AssertStmt: condition, message args, body;
// ...). StmtMutator mirrors it and returns
// the same node when nothing changed; buffers of stores go through mutate_buffer. Definitions
// (loop vars, let vars, allocated buffer vars) are not mutated by default.
#pragma once

#include "anvil/ir/expr_functor.h"
#include "anvil/tir/prim_func.h"
#include "anvil/tir/stmt.h"

namespace anvil::tir {

class StmtVisitor : public ir::ExprVisitor {
 public:
  using ir::ExprVisitor::visit_;
  // Visits s (ignored when undefined).
  virtual void visit_stmt(const Stmt& s);

#define ANVIL_STMT_KIND(Name) virtual void visit_(const Name##Node* op);
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
};

class StmtMutator : public ir::ExprMutator {
 public:
  using ir::ExprMutator::mutate_;
  // The mutated statement (undefined stays undefined).
  virtual Stmt mutate_stmt(const Stmt& s);
  // f with its body mutated (f itself when unchanged). Params and buffer_map are kept.
  PrimFunc mutate_func(const PrimFunc& f);

#define ANVIL_STMT_KIND(Name) virtual Stmt mutate_(const Name##Node* op);
#include "anvil/tir/stmt_kinds.def"
#undef ANVIL_STMT_KIND
};

inline Stmt ref_of(const StmtNode* node) { return Stmt(node); }

// s with every use of a mapped var replaced (see ir::substitute; buffers are rebuilt too).
Stmt substitute(const Stmt& s, const ir::VarMap& map);
Stmt substitute(const Stmt& s, const std::function<std::optional<PrimExpr>(const Var&)>& fn);
using ir::substitute;

// Calls on_expr / on_stmt on every expression and statement node reachable from s, children
// before parents (post-order). Either callback may be null.
void post_order_visit(const Stmt& s, const std::function<void(const ir::PrimExprNode*)>& on_expr,
                      const std::function<void(const StmtNode*)>& on_stmt = nullptr);

}  // namespace anvil::tir
