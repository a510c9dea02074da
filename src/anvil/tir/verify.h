// Well-formedness check of a PrimFunc, run between pipeline stages in debug builds and by pass
// tests: every variable is used only inside the scope that defines it (params, the symbolic
// shape/stride/offset vars and data vars of param buffers, loop vars, let vars, allocated
// buffer vars, Let expression vars), no variable is redefined while in scope, and every buffer a
// load/store touches reaches memory through a data var in scope.
#pragma once

#include <string>
#include <vector>

#include "anvil/tir/prim_func.h"

namespace anvil::tir {

// The problems found, one readable line each (empty when well formed).
std::vector<std::string> well_formed_errors(const PrimFunc& f);

// Throws an internal error (a compiler bug: a pass produced bad IR) listing the problems and
// the printed function, naming `stage` (e.g. the pass that just ran).
void check_well_formed(const PrimFunc& f, const std::string& stage);

}  // namespace anvil::tir
