// Structural equality of expressions: same kinds, dtypes, values and shape of tree, with
// variables compared through a mapping rather than by name.
//
// Rules (shared by tir's statement/function version and by structural_hash):
//  - Names never matter (variables, buffers, the function's global_symbol).
//  - A variable *definition* (Let var here; loop vars, let vars, allocated buffer vars, params
//    and the symbolic shape vars of param buffers in tir) maps the left var to the right var;
//    later uses must follow that mapping. Defining a var again (one Var reused by two sibling
//    loops) replaces its mapping.
//  - A free variable (used, never defined) equals only itself — unless map_free_vars, in which
//    case free vars are mapped on first use like definitions (one-to-one, same dtype).
//  - Buffers are compared by structure (dtype, shape, strides, offset, alignment, scope and data
//    var) the first time a pair meets, and must keep pairing the same way afterwards.
//  - Float immediates compare by bit pattern (NaN equals NaN, 0.0 differs from -0.0).
#pragma once

#include <unordered_map>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

bool structural_equal(const PrimExpr& a, const PrimExpr& b, bool map_free_vars = false);

// The comparison state; tir extends it with statements and functions.
class StructuralEqualizer {
 public:
  explicit StructuralEqualizer(bool map_free_vars) : map_free_vars_(map_free_vars) {}
  virtual ~StructuralEqualizer() = default;

  bool expr(const PrimExpr& a, const PrimExpr& b);
  bool exprs(const std::vector<PrimExpr>& a, const std::vector<PrimExpr>& b);
  // Maps a to b as a definition (dtypes must match).
  bool define_var(const Var& a, const Var& b);
  // A buffer being used (load/store).
  bool buffer(const Buffer& a, const Buffer& b);
  // A buffer being declared by a function's buffer_map: its data var and any still-unmapped
  // Var in its shape/strides/offset are defined here.
  bool define_buffer(const Buffer& a, const Buffer& b);

 protected:
  bool var_use(const VarNode* a, const VarNode* b);
  // An expression in a buffer declaration: unmapped Vars are defined.
  bool decl_expr(const PrimExpr& a, const PrimExpr& b);
  bool buffer_fields(const Buffer& a, const Buffer& b, bool declare);
  void map_var(const VarNode* a, const VarNode* b);

  bool map_free_vars_;
  std::unordered_map<const VarNode*, const VarNode*> var_l2r_, var_r2l_;
  std::unordered_map<const BufferNode*, const BufferNode*> buf_l2r_, buf_r2l_;
};

}  // namespace anvil::ir
