// recognize_softmax (recognize_softmax.h): spelled-out softmax into one nn.softmax.
#include "anvil/graph/passes/recognize_softmax.h"

#include <optional>
#include <unordered_map>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {
namespace {

class SoftmaxMatcher {
 public:
  explicit SoftmaxMatcher(const Function& f) : f_(f), uses_(use_counts(f)) {
    for (size_t i = 0; i < f.bindings().size(); ++i) producer_[f.bindings()[i].var.get()] = i;
  }

  Function run() {
    bindings_ = f_.bindings();
    drop_.assign(bindings_.size(), false);
    bool changed = false;
    for (size_t i = 0; i < bindings_.size(); ++i) changed = match_at(i) || changed;
    if (!changed) return f_;
    std::vector<Binding> out;
    for (size_t i = 0; i < bindings_.size(); ++i)
      if (!drop_[i]) out.push_back(bindings_[i]);
    return Function::make(f_.params(), std::move(out), f_.result());
  }

 private:
  // The call of `op` bound to var `e` when `e` has exactly `uses` uses, else null; *at: its binding.
  const CallNode* call_of(const Expr& e, const std::string& op, int uses, size_t* at) const {
    auto it = producer_.find(e.get());
    if (it == producer_.end() || drop_[it->second]) return nullptr;
    auto u = uses_.find(e.get());
    if (u == uses_.end() || u->second != uses) return nullptr;
    const auto* c = bindings_[it->second].value.as<CallNode>();
    if (c == nullptr || c->op() != op) return nullptr;
    *at = it->second;
    return c;
  }

  // The one axis (normalised) a keepdims reduction of a rank-`rank` value reduces, or nullopt.
  static std::optional<int64_t> single_axis(const CallNode& r, int rank) {
    if (get_int(r.attrs(), "keepdims", 1) != 1 || !has_attr(r.attrs(), "axes")) return std::nullopt;
    std::vector<int64_t> axes = get_ints(r.attrs(), "axes", {});
    if (axes.size() != 1) return std::nullopt;
    int64_t a = axes[0] < 0 ? axes[0] + rank : axes[0];
    if (a < 0 || a >= rank) return std::nullopt;
    return a;
  }

  bool match_at(size_t i) {
    const auto* div = bindings_[i].value.as<CallNode>();
    if (div == nullptr || div->op() != "divide" || div->args().size() != 2) return false;
    const Type& t = div->type();
    if (!t.is_tensor() || !t.has_rank() || t.dtype() != DataType::float32()) return false;
    const int rank = t.ndim();
    size_t at_e, at_s, at_d = 0, at_m = 0;
    const Expr& e = div->args()[0];
    const CallNode* sum = call_of(div->args()[1], "sum", 1, &at_s);
    const CallNode* exp = sum && sum->args()[0].same_as(e) ? call_of(e, "exp", 2, &at_e) : nullptr;
    std::optional<int64_t> axis = exp ? single_axis(*sum, rank) : std::nullopt;
    if (!axis) return false;
    std::vector<size_t> pattern = {at_e, at_s};
    Expr x = exp->args()[0];
    // The optional max subtraction before the exp.
    if (const CallNode* sub = call_of(x, "subtract", 1, &at_d)) {
      const CallNode* max = call_of(sub->args()[1], "max", 1, &at_m);
      if (max != nullptr && max->args()[0].same_as(sub->args()[0]) && single_axis(*max, rank) == axis) {
        x = sub->args()[0];
        pattern.push_back(at_d);
        pattern.push_back(at_m);
      }
    }
    if (!type_equal(x.type(), t)) return false;
    Attrs attrs{{"axis", AttrValue(*axis)}};
    Type st;
    try {
      st = infer_call_type("nn.softmax", {x}, attrs);
    } catch (const Error&) {
      return false;
    }
    if (!type_equal(st, t)) return false;
    bindings_[i].value = Call::make("nn.softmax", {x}, std::move(attrs), st);
    for (size_t k : pattern) drop_[k] = true;
    return true;
  }

  const Function& f_;
  std::unordered_map<const ExprNode*, int> uses_;
  std::unordered_map<const ExprNode*, size_t> producer_;
  std::vector<Binding> bindings_;
  std::vector<bool> drop_;
};

}  // namespace

Function recognize_softmax(const Function& f) { return SoftmaxMatcher(f).run(); }

IRModule recognize_softmax(const IRModule& mod) {
  IRModule out = mod;
  for (auto& [name, fn] : out.functions) fn = recognize_softmax(fn);
  return out;
}

}  // namespace anvil::graph::passes
