// The shared step of the pattern passes (recognize_layer_norm, recognize_gelu, recognize_softmax):
// a function's bindings with their producers and use counts, the lookups a matcher walks a
// pattern with, and the rewrite — one binding's value replaced by the recognised op, the
// pattern's other bindings dropped — applied when the matcher is done. Not a pass itself.
//
//   BindingRewriter rw(f);
//   size_t at;
//   if (const CallNode* s = rw.producer_call(div->args()[1], "sqrt", 1, &at)) ...
//   rw.replace(i, Call::make("nn.layer_norm", ...)); rw.drop(at);
//   return rw.result();   // f itself when nothing was replaced
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/graph/function.h"

namespace anvil::graph::passes {

class BindingRewriter {
 public:
  explicit BindingRewriter(const Function& f);

  size_t size() const { return bindings_.size(); }
  const Binding& binding(size_t i) const { return bindings_[i]; }
  // The call bound at i (null for another value).
  const CallNode* call_at(size_t i) const { return bindings_[i].value.as<CallNode>(); }
  // How many times the bindings and the result use var `e` (0 for anything else).
  int uses(const Expr& e) const;
  // The index of the binding that defines var `e`.
  std::optional<size_t> producer(const Expr& e) const;
  // The call of `op` bound to var `e` when `e` has exactly `uses` uses and its binding was not
  // dropped; *at: the binding's index. Null otherwise.
  const CallNode* producer_call(const Expr& e, const std::string& op, int uses, size_t* at) const;
  // The first binding after `v`'s that reads `v`, when it calls `op` and was not dropped; *at:
  // its index. Null otherwise.
  const CallNode* consumer_call(const Var& v, const std::string& op, size_t* at) const;

  void replace(size_t i, Expr value);
  void drop(size_t i) { drop_[i] = true; }
  bool dropped(size_t i) const { return drop_[i]; }

  // The function with the replacements made and the dropped bindings gone; f itself if none.
  Function result() const;

 private:
  const Function& f_;
  std::unordered_map<const ExprNode*, int> uses_;
  std::unordered_map<const ExprNode*, size_t> producer_;
  std::vector<Binding> bindings_;
  std::vector<bool> drop_;
  bool changed_ = false;
};

// `pass` applied to every function of `mod`.
IRModule rewrite_functions(const IRModule& mod, Function (*pass)(const Function&));

}  // namespace anvil::graph::passes
