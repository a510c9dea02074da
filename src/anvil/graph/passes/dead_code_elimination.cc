// dead_code_elimination (dead_code_elimination.h): one backward sweep from the result.
#include "anvil/graph/passes/dead_code_elimination.h"

#include <unordered_set>

#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {

Function dead_code_elimination(const Function& f) {
  std::unordered_set<const ExprNode*> live;
  auto mark = [&](const VarNode& v) { live.insert(&v); };
  for_each_var(f.result(), mark);
  const std::vector<Binding>& bindings = f.bindings();
  std::vector<bool> keep(bindings.size(), false);
  size_t kept = 0;
  for (size_t i = bindings.size(); i-- > 0;) {
    if (!live.count(bindings[i].var.get())) continue;
    keep[i] = true;
    ++kept;
    for_each_var(bindings[i].value, mark);
  }
  if (kept == bindings.size()) return f;
  std::vector<Binding> out;
  out.reserve(kept);
  for (size_t i = 0; i < bindings.size(); ++i)
    if (keep[i]) out.push_back(bindings[i]);
  return Function::make(f.params(), std::move(out), f.result());
}

IRModule dead_code_elimination(const IRModule& mod) {
  IRModule out = mod;
  for (auto& [name, f] : out.functions) f = dead_code_elimination(f);
  return out;
}

}  // namespace anvil::graph::passes
