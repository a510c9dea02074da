// The shape heap of one VM function as vm_codegen lays it out: one int64 slot per symbolic
// dimension Var (bound from the parameters' shapes by match_shape) and one per derived value
// (n * 2, allocation sizes), numbered by (op, a, b) so each is computed once by shape_compute.
// Operands are what the heap builtins read: an immediate (code 0) or a slot (code 1).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/ir/expr.h"

namespace anvil::pipeline {

// A value the heap builtins read: an immediate (code 0) or a heap slot (code 1).
struct HeapOperand {
  int64_t code = 0;
  int64_t value = 0;
  bool is_imm() const { return code == 0; }
};

class ShapeHeap {
 public:
  struct Compute {
    int64_t dst;
    std::string op;
    HeapOperand a, b;
  };

  int64_t size() const { return size_; }
  size_t num_vars() const { return var_slot_.size(); }
  const std::vector<Compute>& computes() const { return computes_; }
  std::optional<int64_t> var_slot(const ir::VarNode* v) const {
    auto it = var_slot_.find(v);
    return it == var_slot_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }
  int64_t bind_var(const ir::Var& v) {
    var_slot_[v.get()] = size_;
    vars_by_name_[v->name()].push_back(v);
    return size_++;
  }
  // Takes over the derived values a first emission numbered (the Vars bound so far must be bound
  // the same way), and the slots of the Vars it bound later (control-flow results' dimensions).
  void adopt_computes(const ShapeHeap& first) {
    ANVIL_ICHECK(first.num_vars() >= num_vars() && computes_.empty(), "shape heap passes disagree");
    for (const auto& [v, slot] : var_slot_) ANVIL_ICHECK(first.var_slot(v) == slot, "shape heap passes disagree");
    for (const auto& [v, slot] : first.var_slot_)
      if (var_slot_.emplace(v, slot).second) vars_by_name_[v->name()].push_back(ir::Var(v));
    computes_ = first.computes_;
    keys_ = first.keys_;
    size_ = first.size_;
  }
  // The bound Var of that name (call_tir's "shape_vars" name them).
  ir::Var var_named(const std::string& func, const std::string& name) const {
    auto it = vars_by_name_.find(name);
    if (it == vars_by_name_.end())
      value_error(func, ": symbolic dimension '", name, "' is not bound by the shape of any input");
    if (it->second.size() > 1)
      value_error(func, ": two different symbolic dimensions are named '", name, "'");
    return it->second[0];
  }

  // The operand of a dimension expression: constants are immediates, Vars their slots, and
  // + - * // % min max (Div as floor division: dimensions are >= 0; casts looked through) get a
  // slot each. ValueError for a Var no input binds; NotImplementedError for other expressions.
  HeapOperand operand(const std::string& func, const ir::PrimExpr& e);
  // op(a, b): folded when both are immediates (add, sub, mul), else the slot computing it.
  HeapOperand compute(const std::string& op, HeapOperand a, HeapOperand b);

 private:
  int64_t size_ = 0;
  std::unordered_map<const ir::VarNode*, int64_t> var_slot_;
  std::map<std::string, std::vector<ir::Var>> vars_by_name_;
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, int64_t> keys_;
  std::vector<Compute> computes_;
};

}  // namespace anvil::pipeline
