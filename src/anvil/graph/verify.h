// Well-formedness of graph IR, checked between compiler stages (pipeline/) and by pass tests.
//  - every Var used is a parameter or bound by an earlier binding; each is bound once;
//  - every call names a registered operator with an arity it accepts (call_tir: a PrimFunc of
//    the module), and its type is what the operator infers for its arguments now;
//  - each binding's var has the type of its value; the result is in scope;
//  - after import (allow_unknown_rank false) no type holds a tensor of unknown rank.
// Findings name the function and the binding ("@main, binding 3 (%y): ...").
#pragma once

#include <string>
#include <vector>

#include "anvil/graph/function.h"

namespace anvil::graph {

struct VerifyOptions {
  bool allow_unknown_rank = false;  // true only for IR straight out of an importer
};

// Every finding, in order; empty when well formed.
std::vector<std::string> well_formed_errors(const IRModule& mod, const VerifyOptions& options = {});
// One function; `mod` (may be null) resolves call_tir callees.
std::vector<std::string> well_formed_errors(const Function& f, const std::string& name, const IRModule* mod,
                                            const VerifyOptions& options = {});
// InternalError "graph IR after <stage> is not well formed:" and the findings (a pass broke it).
void check_well_formed(const IRModule& mod, const std::string& stage, const VerifyOptions& options = {});

}  // namespace anvil::graph
