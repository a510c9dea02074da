// Function factory and IRModule lookups.
#include "anvil/graph/function.h"

#include "anvil/base/error.h"

namespace anvil::graph {

Function Function::make(std::vector<Var> params, std::vector<Binding> bindings, Expr result) {
  for (size_t i = 0; i < params.size(); ++i)
    if (!params[i].defined()) value_error("graph: parameter ", i, " of a function is undefined");
  for (size_t i = 0; i < bindings.size(); ++i)
    if (!bindings[i].var.defined() || !bindings[i].value.defined())
      value_error("graph: binding ", i, " of a function is undefined");
  if (!result.defined()) value_error("graph: a function needs a result");
  auto* n = new FunctionNode();
  n->params_ = std::move(params);
  n->bindings_ = std::move(bindings);
  n->result_ = std::move(result);
  return Function(n);
}

const Function& IRModule::function(const std::string& name) const {
  auto it = functions.find(name);
  if (it == functions.end()) {
    std::string names;
    for (const auto& [k, v] : functions) names += (names.empty() ? "" : ", ") + k;
    value_error("IRModule: no function '", name, "' (it has: ", names.empty() ? "none" : names, ")");
  }
  return it->second;
}

std::string IRModule::unique_name(const std::string& hint) const {
  auto taken = [&](const std::string& n) { return functions.count(n) != 0 || prim_funcs.count(n) != 0; };
  if (!taken(hint)) return hint;
  for (int i = 1;; ++i) {
    std::string n = hint + "_" + std::to_string(i);
    if (!taken(n)) return n;
  }
}

}  // namespace anvil::graph
