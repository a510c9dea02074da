// Structural hash of expressions, consistent with structural_equal: structurally equal
// expressions (under the same map_free_vars flag) hash equal. Defined variables hash by their
// definition order, free variables by identity (or by first-use order with map_free_vars);
// names never enter the hash. Without free variables the value does not depend on the process
// or platform (no pointers, no std::hash), so it may be stored (tuning records).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

uint64_t structural_hash(const PrimExpr& e, bool map_free_vars = false);

// The hashing state; tir extends it with statements and functions.
class StructuralHasher {
 public:
  explicit StructuralHasher(bool map_free_vars) : map_free_vars_(map_free_vars) {}
  virtual ~StructuralHasher() = default;

  uint64_t expr(const PrimExpr& e);
  uint64_t exprs(const std::vector<PrimExpr>& es);
  // Numbers v as the next definition and returns a hash of that (and its dtype).
  uint64_t define_var(const Var& v);
  uint64_t buffer(const Buffer& b);
  uint64_t define_buffer(const Buffer& b);

  static uint64_t combine(uint64_t seed, uint64_t value);
  static uint64_t str_hash(std::string_view s);

 protected:
  uint64_t var_use(const VarNode* v);
  uint64_t decl_expr(const PrimExpr& e);
  uint64_t buffer_fields(const Buffer& b, bool declare);

  bool map_free_vars_;
  std::unordered_map<const VarNode*, uint64_t> var_ids_;
  uint64_t next_id_ = 0;
};

}  // namespace anvil::ir
