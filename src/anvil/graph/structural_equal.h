// Structural equality of graph IR: two functions (or modules) are equal when they compute the
// same thing written the same way, whatever their names.
//  - Vars are matched by position: parameters pairwise, then each binding's var with the binding
//    at the same index; a use must refer to the matched var.
//  - Constants compare by value (dtype, shape and bytes), not by tensor identity.
//  - Dimensions compare with ir::structural_equal; free size vars (n, batch) are mapped on
//    first sight and must keep mapping one-to-one across the whole comparison (a module's
//    functions share one mapping).
//  - Calls: the same operator, attributes, arguments and type.
//  - Modules: the same function names, each pair equal, the same attributes, and the same
//    PrimFunc names with tir::structural_equal bodies.
#pragma once

#include <string>

#include "anvil/graph/function.h"

namespace anvil::graph {

bool structural_equal(const Function& a, const Function& b);
bool structural_equal(const IRModule& a, const IRModule& b);
bool structural_equal(const Type& a, const Type& b);  // dims with free size vars mapped

}  // namespace anvil::graph
