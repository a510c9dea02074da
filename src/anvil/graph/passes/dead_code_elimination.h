// dead_code_elimination: drops the bindings that the function's result does not need, directly
// or through other bindings. Graph functions are pure (function.h), so an unused binding has
// no effect. Parameters, functions and PrimFuncs are kept. A function with nothing to remove is
// returned as it is (same node).
#pragma once

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

IRModule dead_code_elimination(const IRModule& mod);
Function dead_code_elimination(const Function& f);

}  // namespace anvil::graph::passes
