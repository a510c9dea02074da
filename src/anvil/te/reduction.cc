// Reduction markers, identities and combiners.
#include "anvil/te/reduction.h"

#include <limits>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/ir/expr_functor.h"

namespace anvil::te {
namespace {

// Marker var -> the reduction it stands for. The entry keeps the marker alive (so its address is
// never reused by another variable); compute() removes it. A marker that is never used stays
// until the thread ends.
struct Marker {
  Var var;
  ReductionParts parts;
};
thread_local std::unordered_map<const ir::VarNode*, Marker> g_markers;

PrimExpr make_marker(ReduceKind kind, const PrimExpr& source, const std::vector<IterVar>& axes) {
  const char* name = reduce_kind_name(kind);
  if (!source.defined()) value_error(name, ": the source expression is undefined");
  if (source.dtype().lanes() != 1) type_error(name, ": the source must be a scalar expression");
  if (axes.empty()) value_error(name, ": no reduction axes given");
  for (const IterVar& k : axes) {
    if (!k.defined()) value_error(name, ": a reduction axis is undefined");
    if (!k.is_reduce())
      value_error(name, ": axis '", k->name(), "' is not a reduction axis (make it with te::reduce_axis)");
  }
  Var marker(std::string("__") + name + "_reduction", source.dtype());
  g_markers[marker.get()] = Marker{marker, ReductionParts{kind, source, axes}};
  return marker;
}

}  // namespace

PrimExpr sum(const PrimExpr& source, const std::vector<IterVar>& axes) {
  return make_marker(ReduceKind::kSum, source, axes);
}
PrimExpr max(const PrimExpr& source, const std::vector<IterVar>& axes) {
  return make_marker(ReduceKind::kMax, source, axes);
}
PrimExpr min(const PrimExpr& source, const std::vector<IterVar>& axes) {
  return make_marker(ReduceKind::kMin, source, axes);
}

const char* reduce_kind_name(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
      return "sum";
    case ReduceKind::kMax:
      return "max";
    case ReduceKind::kMin:
      return "min";
    case ReduceKind::kNone:
      break;
  }
  return "none";
}

PrimExpr reduce_identity(ReduceKind kind, DataType dtype) {
  double inf = std::numeric_limits<double>::infinity();
  switch (kind) {
    case ReduceKind::kSum:
      return ir::make_zero(dtype);
    case ReduceKind::kMax:
    case ReduceKind::kMin: {
      bool is_max = kind == ReduceKind::kMax;
      if (dtype.is_float()) return ir::make_const(dtype, is_max ? -inf : inf);
      if (dtype.is_uint()) {
        if (is_max) return ir::make_zero(dtype);
        uint64_t hi = dtype.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (uint64_t{1} << dtype.bits()) - 1;
        return ir::int_imm(static_cast<int64_t>(hi), dtype);
      }
      if (dtype.is_int()) {
        int64_t hi = dtype.bits() >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (dtype.bits() - 1)) - 1;
        return ir::int_imm(is_max ? -hi - 1 : hi, dtype);
      }
      type_error(reduce_kind_name(kind), ": no identity for dtype ", ir::dtype_name(dtype));
    }
    case ReduceKind::kNone:
      break;
  }
  value_error("reduce_identity: not a reduction");
}

PrimExpr reduce_combine(ReduceKind kind, const PrimExpr& acc, const PrimExpr& value) {
  switch (kind) {
    case ReduceKind::kSum:
      return acc + value;
    case ReduceKind::kMax:
      return ir::max(acc, value);
    case ReduceKind::kMin:
      return ir::min(acc, value);
    case ReduceKind::kNone:
      break;
  }
  value_error("reduce_combine: not a reduction");
}

ReductionParts take_reduction(const PrimExpr& body, const std::string& tensor_name) {
  ReductionParts parts;
  const ir::VarNode* top = body.as<ir::VarNode>();
  if (top && g_markers.count(top)) {
    parts = g_markers.at(top).parts;
    g_markers.erase(top);
  } else {
    parts.source = body;
  }
  // No marker may remain inside the source (a nested reduction).
  struct Check : ir::ExprVisitor {
    const std::string* name;
    using ir::ExprVisitor::visit_;
    void visit_(const ir::VarNode* op) override {
      auto it = g_markers.find(op);
      if (it != g_markers.end())
        value_error("compute '", *name, "': a reduction (", reduce_kind_name(it->second.parts.kind),
                    ") may only be the whole body of a compute, not part of an expression; "
                    "compute the reduction in its own tensor");
    }
  } check;
  check.name = &tensor_name;
  check.visit_expr(parts.source);
  return parts;
}

}  // namespace anvil::te
