// BindingRewriter (binding_rewriter.h): lookups over a function's bindings and the rewrite.
#include "anvil/graph/passes/binding_rewriter.h"

#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {

BindingRewriter::BindingRewriter(const Function& f)
    : f_(f), uses_(use_counts(f)), bindings_(f.bindings()), drop_(f.bindings().size(), false) {
  for (size_t i = 0; i < bindings_.size(); ++i) producer_[bindings_[i].var.get()] = i;
}

int BindingRewriter::uses(const Expr& e) const {
  auto u = uses_.find(e.get());
  return u == uses_.end() ? 0 : u->second;
}

std::optional<size_t> BindingRewriter::producer(const Expr& e) const {
  auto it = producer_.find(e.get());
  if (it == producer_.end()) return std::nullopt;
  return it->second;
}

const CallNode* BindingRewriter::producer_call(const Expr& e, const std::string& op, int n, size_t* at) const {
  std::optional<size_t> p = producer(e);
  if (!p || drop_[*p] || uses(e) != n) return nullptr;
  const CallNode* c = call_at(*p);
  if (c == nullptr || c->op() != op) return nullptr;
  *at = *p;
  return c;
}

const CallNode* BindingRewriter::consumer_call(const Var& v, const std::string& op, size_t* at) const {
  std::optional<size_t> p = producer(v);
  if (!p) return nullptr;
  for (size_t k = *p + 1; k < bindings_.size(); ++k) {
    const CallNode* c = call_at(k);
    if (c == nullptr) continue;
    bool reads = false;
    for (const Expr& a : c->args()) reads = reads || a.same_as(v);
    if (!reads) continue;
    if (c->op() != op || drop_[k]) return nullptr;
    *at = k;
    return c;
  }
  return nullptr;
}

void BindingRewriter::replace(size_t i, Expr value) {
  bindings_[i].value = std::move(value);
  changed_ = true;
}

Function BindingRewriter::result() const {
  if (!changed_) return f_;
  std::vector<Binding> out;
  for (size_t i = 0; i < bindings_.size(); ++i)
    if (!drop_[i]) out.push_back(bindings_[i]);
  return Function::make(f_.params(), std::move(out), f_.result());
}

IRModule rewrite_functions(const IRModule& mod, Function (*pass)(const Function&)) {
  IRModule out = mod;
  for (auto& [name, fn] : out.functions) fn = pass(fn);
  return out;
}

}  // namespace anvil::graph::passes
