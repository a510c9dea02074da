// Generic expression visitor and copy-on-write mutator, and var substitution.
//
// ExprVisitor walks an expression tree: visit_expr(e) dispatches on e's kind to the matching
// visit_(const XNode*) overload, whose default visits the operands (Let: value then body; Call:
// args; BufferLoad: indices; leaves: nothing). Override the overloads you care about and call
// ExprVisitor::visit_(op) to keep walking.
//
// ExprMutator rebuilds: mutate_expr(e) dispatches to mutate_(const XNode*), whose default
// mutates the operands and returns the *same* node (not a copy) when none changed, else a new
// node through the strict factory (so a mutation that breaks dtypes throws TypeError).
// Buffers referenced by loads go through mutate_buffer (default: unchanged). Definitions (the
// var of a Let) are not mutated by default.
#pragma once

#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

class ExprVisitor {
 public:
  virtual ~ExprVisitor() = default;
  // Visits e (ignored when undefined).
  virtual void visit_expr(const PrimExpr& e);

#define ANVIL_EXPR_KIND(Name) virtual void visit_(const Name##Node* op);
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND
};

class ExprMutator {
 public:
  virtual ~ExprMutator() = default;
  // The mutated expression (undefined stays undefined).
  virtual PrimExpr mutate_expr(const PrimExpr& e);
  // Hook for buffers referenced by loads (and, in tir, stores). Default: unchanged.
  virtual Buffer mutate_buffer(const Buffer& buffer) { return buffer; }

#define ANVIL_EXPR_KIND(Name) virtual PrimExpr mutate_(const Name##Node* op);
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_EXPR_KIND

 protected:
  // Mutates each element; *changed is set when any element changed. Returns the input vector
  // (shared elements) when nothing changed.
  std::vector<PrimExpr> mutate_exprs(const std::vector<PrimExpr>& exprs, bool* changed);
};

// An owning handle to a node a visitor received as a raw pointer (intrusive counts make this
// free and safe while the tree is alive).
inline PrimExpr ref_of(const PrimExprNode* node) { return PrimExpr(node); }

// Var -> replacement, keyed by identity; a set of vars by identity.
using VarMap = std::unordered_map<Var, PrimExpr, NodeIdentityHash, NodeIdentityEqual>;
using VarSet = std::unordered_set<Var, NodeIdentityHash, NodeIdentityEqual>;

// e with every use of a mapped var replaced (replacements must have the var's dtype, else
// TypeError from the rebuilt node). Buffers whose shape/strides/offset/data mention mapped vars
// are rebuilt too (one new Buffer per old one).
PrimExpr substitute(const PrimExpr& e, const VarMap& map);
// The same with a callback: return the replacement, or nullopt to keep the var.
PrimExpr substitute(const PrimExpr& e, const std::function<std::optional<PrimExpr>(const Var&)>& fn);

// The substituting mutator itself, for tir's statement version to extend.
class SubstituteMutator : public ExprMutator {
 public:
  explicit SubstituteMutator(std::function<std::optional<PrimExpr>(const Var&)> fn) : fn_(std::move(fn)) {}
  using ExprMutator::mutate_;
  PrimExpr mutate_(const VarNode* op) override;
  Buffer mutate_buffer(const Buffer& buffer) override;

 private:
  std::function<std::optional<PrimExpr>(const Var&)> fn_;
  std::unordered_map<const BufferNode*, Buffer> buffers_;
};

}  // namespace anvil::ir
