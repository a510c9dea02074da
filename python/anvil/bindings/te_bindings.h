// Declarations shared by the tensor-expression bindings (anvil._ffi.te): expressions (expr.cc),
// tensors and schedules (te.cc), lowering and building (build.cc).
#pragma once

#include "anvil/ir/expr.h"
#include "anvil/te/tensor.h"
#include "bindings.h"

namespace anvil::python {

// Area initialisers; module.cc calls init_te_bindings, which defines the submodule `te`.
void init_te_bindings(nb::module_& m);
void init_expr(nb::module_& te);        // expr.cc: PrimExpr, Var, operators, intrinsics
void init_te_schedule(nb::module_& te);  // te.cc: IterVar, Tensor, Stage, Schedule
void init_te_build(nb::module_& te);     // build.cc: PrimFunc, lower, build, module sources

// Python -> expression: PrimExpr, IterVar (its var), bool (a bool constant), int (int32 when it
// fits, else int64), float (a float32 constant), numpy scalars alike. TypeError otherwise.
ir::PrimExpr to_expr(nb::handle obj);
// A shape: an int, an expression, or a sequence of them.
std::vector<ir::PrimExpr> to_shape(nb::handle obj);
// Python's arithmetic and comparison operators on IterVar (acting on its var), from expr.cc.
void def_itervar_operators(nb::class_<te::IterVar>& cls);
// A dtype string ("float32", "int64x4"); ValueError for unknown names.
DataType to_dtype(const std::string& text);

}  // namespace anvil::python
