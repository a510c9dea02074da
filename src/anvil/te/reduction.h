// Reductions of tensor expressions: te::sum / te::max / te::min over reduction axes.
//
//   IterVar k = reduce_axis(0, K, "k");
//   Tensor C = compute({M, N}, [&](Var i, Var j) { return sum(A(i, k) * B(k, j), {k}); }, "C");
//
// A reduction may only be the whole body of a compute (ValueError otherwise, e.g. for
// sum(...) * 2: write a second compute). The IR has no reduction node, so sum() returns a
// marker variable that compute() recognises and replaces by (kind, source, axes); a marker met
// anywhere else is the nesting error. Identities: sum 0, max -inf (lowest integer), min +inf
// (highest integer).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "anvil/te/tensor.h"

namespace anvil::te {

PrimExpr sum(const PrimExpr& source, const std::vector<IterVar>& axes);
PrimExpr max(const PrimExpr& source, const std::vector<IterVar>& axes);
PrimExpr min(const PrimExpr& source, const std::vector<IterVar>& axes);

// The identity element of a reduction in dtype.
PrimExpr reduce_identity(ReduceKind kind, DataType dtype);
// The combination of the accumulator and a new value (a + b, max(a, b), min(a, b)).
PrimExpr reduce_combine(ReduceKind kind, const PrimExpr& acc, const PrimExpr& value);
const char* reduce_kind_name(ReduceKind kind);

struct ReductionParts {
  ReduceKind kind = ReduceKind::kNone;
  PrimExpr source;
  std::vector<IterVar> axes;
};

// For compute(): splits a body into its reduction parts (kind kNone and the body itself when it
// is no reduction). Throws ValueError naming `tensor_name` when a reduction marker is nested.
ReductionParts take_reduction(const PrimExpr& body, const std::string& tensor_name);

}  // namespace anvil::te
