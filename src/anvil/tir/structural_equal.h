// Structural equality and hash of statements and PrimFuncs (the rules of
// "anvil/ir/structural_equal.h"): loop vars, let vars, allocated buffer vars, params and the
// symbolic shape vars of param buffers are definitions, so two functions that differ only in
// names or in which Var/Buffer objects they use compare equal and hash equal. Function
// attributes are compared too, except global_symbol (a name). The tuner keys workloads on these.
#pragma once

#include <cstdint>

#include "anvil/ir/structural_equal.h"
#include "anvil/ir/structural_hash.h"
#include "anvil/tir/prim_func.h"
#include "anvil/tir/stmt.h"

namespace anvil::tir {

bool structural_equal(const Stmt& a, const Stmt& b, bool map_free_vars = false);
bool structural_equal(const PrimFunc& a, const PrimFunc& b, bool map_free_vars = false);
uint64_t structural_hash(const Stmt& s, bool map_free_vars = false);
uint64_t structural_hash(const PrimFunc& f, bool map_free_vars = false);
using ir::structural_equal;
using ir::structural_hash;

// Functors for hash containers keyed by structure (e.g. the tuner's workload table).
struct StructuralHash {
  uint64_t operator()(const PrimFunc& f) const { return structural_hash(f); }
};
struct StructuralEqual {
  bool operator()(const PrimFunc& a, const PrimFunc& b) const { return structural_equal(a, b); }
};

}  // namespace anvil::tir
