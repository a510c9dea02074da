// recognize_softmax (recognize_softmax.h): spelled-out softmax into one nn.softmax.
#include "anvil/graph/passes/recognize_softmax.h"

#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/passes/binding_rewriter.h"

namespace anvil::graph::passes {
namespace {

class SoftmaxMatcher {
 public:
  explicit SoftmaxMatcher(const Function& f) : rw_(f) {}

  Function run() {
    for (size_t i = 0; i < rw_.size(); ++i) match_at(i);
    return rw_.result();
  }

 private:
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
    const CallNode* div = rw_.call_at(i);
    if (div == nullptr || div->op() != "divide" || div->args().size() != 2) return false;
    const Type& t = div->type();
    if (!t.is_tensor() || !t.has_rank() || t.dtype() != DataType::float32()) return false;
    const int rank = t.ndim();
    size_t at_e, at_s, at_d = 0, at_m = 0;
    const Expr& e = div->args()[0];
    const CallNode* sum = rw_.producer_call(div->args()[1], "sum", 1, &at_s);
    const CallNode* exp = sum && sum->args()[0].same_as(e) ? rw_.producer_call(e, "exp", 2, &at_e) : nullptr;
    std::optional<int64_t> axis = exp ? single_axis(*sum, rank) : std::nullopt;
    if (!axis) return false;
    std::vector<size_t> pattern = {at_e, at_s};
    Expr x = exp->args()[0];
    // The optional max subtraction before the exp.
    if (const CallNode* sub = rw_.producer_call(x, "subtract", 1, &at_d)) {
      const CallNode* max = rw_.producer_call(sub->args()[1], "max", 1, &at_m);
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
    rw_.replace(i, Call::make("nn.softmax", {x}, std::move(attrs), st));
    for (size_t k : pattern) rw_.drop(k);
    return true;
  }

  BindingRewriter rw_;
};

}  // namespace

Function recognize_softmax(const Function& f) { return SoftmaxMatcher(f).run(); }

IRModule recognize_softmax(const IRModule& mod) {
  return rewrite_functions(mod, static_cast<Function (*)(const Function&)>(recognize_softmax));
}

}  // namespace anvil::graph::passes
