// ONNX If and Loop (control_flow.cc). Their subgraphs are imported with the importer's own
// machinery, so unlike other operators they see the ImportState, not an ImportContext.
//
// If: a condition known at import (a constant, or known values) imports only the taken branch,
// inline, so its known values keep flowing (the AffineGrid function's `Size(size) == 4`). Any
// other condition becomes graph `if` (graph/ops/control_flow.cc): each branch a Function of the
// module taking the outer-scope values the subgraphs read (constants are copied in instead);
// a dimension the branches give differently is a new symbolic one, bound when the if has run.
// Loop: graph `loop` with the body a Function of (iteration, cond, carried..., captured...);
// scan outputs get a fresh symbolic leading dimension.
#pragma once

#include <optional>
#include <string>

#include "anvil/frontend/onnx/import_state.h"

namespace anvil::frontend::onnx {

bool is_control_flow(const std::string& op_type);  // If, Loop
void convert_control_flow(ImportState& state, const NodeProto& node, int index);

// Shared with specialize.cc. A nested graph's state: the outer's opset, model, base dir and
// module functions, no values.
ImportState sub_state(const ImportState& outer);
// The type of an if whose branches give a and b: theirs where they agree; a dimension they give
// differently becomes a new symbolic one (hint_d<fresh++>, bound when the if has run). nullopt
// when they differ in more (dtype, rank, tuple arity).
std::optional<graph::Type> unify(const graph::Type& a, const graph::Type& b, const std::string& hint, int& fresh);

// From importer.cc: one node through its converter, and a graph output's expression.
void convert_node(ImportState& state, const NodeProto& node, int index);
graph::Expr output_expr(ImportState& state, const ValueInfoProto& out);

}  // namespace anvil::frontend::onnx
