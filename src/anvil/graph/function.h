// Graph functions and the IRModule, the unit every compiler stage takes and returns.
//
// A Function is a dataflow block: parameters, a list of bindings `var = value` in order (each
// value an expression over parameters, earlier bindings and constants), and a result. It is a
// pure computation with no side effects, so any binding nobody uses can go.
//
// IRModule: graph functions by name ("main" is the entry), the PrimFuncs that call_tir
// bindings call (added by lowering), and module-wide attributes (the model's input/output
// names, the importer's opset). Copying an IRModule copies maps of shared, immutable nodes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "anvil/graph/expr.h"
#include "anvil/tir/prim_func.h"

namespace anvil::graph {

struct Binding {
  Var var;
  Expr value;
};

class FunctionNode : public ir::Node {
 public:
  std::string_view type_key() const override { return "graph.Function"; }
  const std::vector<Var>& params() const { return params_; }
  const std::vector<Binding>& bindings() const { return bindings_; }
  const Expr& result() const { return result_; }
  const Type& ret_type() const { return result_.type(); }

 private:
  friend class Function;
  FunctionNode() = default;
  std::vector<Var> params_;
  std::vector<Binding> bindings_;
  Expr result_;
};

class Function : public ir::NodeRef<FunctionNode> {
 public:
  Function() = default;
  explicit Function(const FunctionNode* n) : NodeRef(n) {}
  // ValueError for an undefined param, binding or result, or a binding whose var type is
  // undefined. Scoping is the verifier's job (verify.h).
  static Function make(std::vector<Var> params, std::vector<Binding> bindings, Expr result);
  const std::vector<Var>& params() const { return get()->params(); }
  const std::vector<Binding>& bindings() const { return get()->bindings(); }
  const Expr& result() const { return get()->result(); }
  const Type& ret_type() const { return get()->ret_type(); }
};

class IRModule {
 public:
  std::map<std::string, Function> functions;
  std::map<std::string, tir::PrimFunc> prim_funcs;
  Attrs attrs;  // "input_names", "output_names" (strings), "opset" (int), ...

  // The function of that name; ValueError naming the module's functions when absent.
  const Function& function(const std::string& name) const;
  const Function& main() const { return function("main"); }
  // A name not used by any function or PrimFunc: `hint`, else hint_1, hint_2, ...
  std::string unique_name(const std::string& hint) const;
};

}  // namespace anvil::graph
