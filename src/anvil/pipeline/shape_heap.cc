// Shape heap value numbering (see shape_heap.h).
#include "anvil/pipeline/shape_heap.h"

namespace anvil::pipeline {

HeapOperand ShapeHeap::operand(const std::string& func, const ir::PrimExpr& e) {
  if (std::optional<int64_t> c = ir::as_const_int(e)) return {0, *c};
  if (const auto* v = e.as<ir::VarNode>()) {
    if (std::optional<int64_t> s = var_slot(v)) return {1, *s};
    value_error(func, ": symbolic dimension '", v->name(), "' is not bound by the shape of any input ",
                "(an input dimension must be exactly that variable)");
  }
  if (const auto* c = e.as<ir::CastNode>()) return operand(func, c->value());
#define ANVIL_HEAP_BINARY(Kind, name) \
  if (const auto* b = e.as<ir::Kind##Node>()) return compute(name, operand(func, b->a()), operand(func, b->b()));
  ANVIL_HEAP_BINARY(Add, "add")
  ANVIL_HEAP_BINARY(Sub, "sub")
  ANVIL_HEAP_BINARY(Mul, "mul")
  ANVIL_HEAP_BINARY(FloorDiv, "floordiv")
  ANVIL_HEAP_BINARY(FloorMod, "floormod")
  ANVIL_HEAP_BINARY(Div, "floordiv")  // dimensions are >= 0: truncation is floor division
  ANVIL_HEAP_BINARY(Min, "min")
  ANVIL_HEAP_BINARY(Max, "max")
#undef ANVIL_HEAP_BINARY
  not_implemented_error(func, ": the VM cannot compute the dimension expression ", ir::expr_kind_name(e.kind()),
                        " (supported: + - * // % min max of dimensions and constants)");
}

HeapOperand ShapeHeap::compute(const std::string& op, HeapOperand a, HeapOperand b) {
  if (a.is_imm() && b.is_imm()) {
    if (op == "add") return {0, a.value + b.value};
    if (op == "mul") return {0, a.value * b.value};
    if (op == "sub") return {0, a.value - b.value};
  }
  auto key = std::make_tuple(op, a.code, a.value, b.code, b.value);
  auto it = keys_.find(key);
  if (it != keys_.end()) return {1, it->second};
  int64_t dst = size_++;
  keys_[key] = dst;
  computes_.push_back({dst, op, a, b});
  return {1, dst};
}

}  // namespace anvil::pipeline
