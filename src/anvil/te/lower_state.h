// Internal to te/ lowering: what bound inference finds about each stage and what loop-nest
// generation consumes (lower.cc builds it, bound_inference.cc fills the bounds, loop_nest.cc
// emits the statements).
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anvil/arith/analyzer.h"
#include "anvil/arith/interval.h"
#include "anvil/ir/expr_functor.h"
#include "anvil/te/schedule.h"
#include "anvil/tir/stmt.h"

namespace anvil::te {

// Symbolic interval arithmetic and the folding builders of bound inference (arith/interval.h).
using arith::eval_interval;
using arith::fold_add;
using arith::fold_ceildiv;
using arith::fold_floordiv;
using arith::fold_floormod;
using arith::fold_max;
using arith::fold_min;
using arith::fold_mul;
using arith::fold_sub;
using arith::Interval;
using arith::RelaxSpec;

struct StageInfo {
  Stage stage;
  bool is_placeholder = false;
  bool is_inline = false;
  bool in_args = false;      // realised in a function argument
  PrimExpr body;             // the op's body with inlined producers substituted (root vars free)
  std::vector<int> readers;  // indices of non-inline stages whose body reads this stage

  // Bounds (compute stages that are not inlined).
  std::vector<Range> region;                                // per output dimension
  std::vector<PrimExpr> unclamped_extent;                   // region extent before clamping to the shape (>= it)
  std::unordered_map<const IterVarNode*, PrimExpr> extent;  // every axis of the stage
  ir::VarMap root_value;                                    // root axis var -> its value in terms of the leaf loop vars
  std::vector<PrimExpr> rel;                                // per output dimension: root value - region min
  struct Guard {
    int position;  // leaf index it goes under
    bool reduce;   // on a reduction root
    PrimExpr cond;
  };
  std::vector<Guard> guards;

  // Realisation.
  Buffer buffer;  // what stores and loads use
  bool allocate = false;
};

struct LowerState {
  std::vector<StageInfo> stages;                             // schedule order: producers first
  std::unordered_map<const ir::BufferNode*, int> by_buffer;  // TE buffer -> stage index
  std::unordered_map<const StageNode*, int> by_stage;
  RelaxSpec loops;  // every leaf loop var bound so far -> extent
  // The same loop ranges for the arith analyzer (simplifying regions, sizing allocations).
  arith::Analyzer analyzer;
  std::vector<arith::BindScope> bindings;

  StageInfo& info(const Stage& s) { return stages[by_stage.at(s.get())]; }
  // Loop vars enclosing the attach point of stage i (empty for the root). For a cooperative
  // shared stage the enclosing threadIdx loops are left out: its region covers the workgroup.
  std::unordered_set<const ir::VarNode*> enclosing_vars(int i);
};

// A stage in "shared" scope with a leaf bound to threadIdx.*: the workgroup's invocations load
// it together, so its region is relaxed over the enclosing thread loops and its nest runs
// between workgroup barriers (loop_nest.cc).
bool is_cooperative_shared(const StageNode* st);

// Fills region/extent/root_value/rel/guards of every stage that is computed (consumers first).
void infer_bounds(LowerState* state);

// The statement computing stage i (its loops, the stages attached inside them, its init).
tir::Stmt make_stage_nest(LowerState* state, int i);
// The arith simplifier over loop extents, indices, allocation extents and guards, with loop
// ranges known (lower_simplify.cc).
tir::Stmt simplify_indices(const tir::Stmt& s);

// min(x, y) + z -> min(x + z, y + z) (also z + min, min - z), each arm simplified, so that terms
// a clamped region subtracts again cancel: min(64 * b + 63, m - 1) - 64 * b + 1 ->
// min(64, m - 64 * b) (lower_simplify.cc). For bounds: sizing allocations, relaxing extents.
ir::PrimExpr add_into_min(const arith::Analyzer& ana, const ir::PrimExpr& e);

// Wraps body in the Allocate (and alignment attribute) of stage i when it needs one.
tir::Stmt wrap_realize(LowerState* state, int i, tir::Stmt body);

}  // namespace anvil::te
