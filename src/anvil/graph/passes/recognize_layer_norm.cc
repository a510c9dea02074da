// recognize_layer_norm (recognize_layer_norm.h): the spelled-out layer norm into nn.layer_norm.
#include "anvil/graph/passes/recognize_layer_norm.h"

#include <optional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/builder.h"
#include "anvil/graph/passes/binding_rewriter.h"

namespace anvil::graph::passes {
namespace {

// The single value of a float32 constant with one element, or nullopt.
std::optional<double> scalar_value(const Expr& e) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || c->data().dtype() != DataType::float32() || c->data().numel() != 1) return std::nullopt;
  float v;
  c->data().copy_to_bytes(&v, sizeof v);
  return v;
}

// For a binary call with `v` as one operand, the other operand (add and multiply commute).
const Expr* other_operand(const CallNode* c, const Expr& v) {
  if (c == nullptr || c->args().size() != 2) return nullptr;
  if (c->args()[0].same_as(v)) return &c->args()[1];
  if (c->args()[1].same_as(v)) return &c->args()[0];
  return nullptr;
}

class LayerNormMatcher {
 public:
  explicit LayerNormMatcher(const Function& f) : rw_(f) {}

  Function run() {
    for (size_t i = 0; i < rw_.size(); ++i) match_at(i);
    return rw_.result();
  }

 private:
  // The first normalised axis when `mean` reduces the trailing axes of an input of rank `rank`
  // with keepdims, else nullopt.
  static std::optional<int64_t> trailing_axes(const CallNode& mean, int rank) {
    if (get_int(mean.attrs(), "keepdims", 1) != 1 || !has_attr(mean.attrs(), "axes")) return std::nullopt;
    std::vector<int64_t> axes = get_ints(mean.attrs(), "axes", {});
    if (axes.empty()) return std::nullopt;
    std::vector<bool> in(static_cast<size_t>(rank), false);
    for (int64_t a : axes) {
      int64_t n = a < 0 ? a + rank : a;
      if (n < 0 || n >= rank || in[static_cast<size_t>(n)]) return std::nullopt;
      in[static_cast<size_t>(n)] = true;
    }
    const int64_t first = rank - static_cast<int64_t>(axes.size());
    for (int64_t d = first; d < rank; ++d)
      if (!in[static_cast<size_t>(d)]) return std::nullopt;
    return first;
  }

  // A constant shaped like the normalised dims (any leading 1s), or null.
  static bool is_param(const Expr& e, const std::vector<int64_t>& norm_shape) {
    const auto* c = e.as<ConstantNode>();
    if (c == nullptr || c->data().dtype() != DataType::float32()) return false;
    std::vector<int64_t> s = c->data().shape();
    while (s.size() > norm_shape.size() && s.front() == 1) s.erase(s.begin());
    return s == norm_shape;
  }

  // Matches the pattern whose divide is binding i.
  bool match_at(size_t i) {
    const CallNode* div = rw_.call_at(i);
    if (div == nullptr || div->op() != "divide" || div->args().size() != 2) return false;
    const Type& t = div->type();
    if (!t.is_tensor() || !t.has_rank() || t.dtype() != DataType::float32()) return false;
    size_t at_s, at_e, at_v, at_p, at_d, at_m;
    const CallNode* sqrt = rw_.producer_call(div->args()[1], "sqrt", 1, &at_s);
    const CallNode* add_eps = sqrt ? rw_.producer_call(sqrt->args()[0], "add", 1, &at_e) : nullptr;
    if (add_eps == nullptr || add_eps->args().size() != 2) return false;
    const bool eps_first = add_eps->args()[0].as<ConstantNode>() != nullptr;
    std::optional<double> eps = scalar_value(add_eps->args()[eps_first ? 0 : 1]);
    const CallNode* var = eps ? rw_.producer_call(add_eps->args()[eps_first ? 1 : 0], "mean", 1, &at_v) : nullptr;
    if (var == nullptr) return false;
    const Expr& d = div->args()[0];
    const CallNode* sq = rw_.producer_call(var->args()[0], "power", 1, &at_p);
    if (sq != nullptr) {
      std::optional<double> two = scalar_value(sq->args()[1]);
      if (!two || *two != 2.0 || !sq->args()[0].same_as(d)) return false;
    } else {
      sq = rw_.producer_call(var->args()[0], "multiply", 1, &at_p);
      if (sq == nullptr || !sq->args()[0].same_as(d) || !sq->args()[1].same_as(d)) return false;
    }
    const int d_uses = sq->op() == "multiply" ? 3 : 2;  // the square's operands and the divide
    const CallNode* sub = rw_.producer_call(d, "subtract", d_uses, &at_d);
    if (sub == nullptr) return false;
    const Expr& x = sub->args()[0];
    const CallNode* mean = rw_.producer_call(sub->args()[1], "mean", 1, &at_m);
    if (mean == nullptr || !mean->args()[0].same_as(x) || !type_equal(x.type(), t)) return false;
    const int rank = t.ndim();
    std::optional<int64_t> axis = trailing_axes(*mean, rank);
    if (!axis || trailing_axes(*var, rank) != axis) return false;
    std::vector<int64_t> norm_shape;
    for (int64_t a = *axis; a < rank; ++a) {
      std::optional<int64_t> n = ir::as_const_int(t.dim(static_cast<int>(a)));
      if (!n) return false;  // gamma's shape must be static
      norm_shape.push_back(*n);
    }
    // The optional affine after the divide: multiply by gamma, then add beta.
    size_t last = i, at_g, at_b;
    std::vector<Expr> args = {x};
    std::vector<size_t> pattern = {at_m, at_d, at_p, at_v, at_e, at_s};
    const CallNode* mul = rw_.uses(rw_.binding(i).var) == 1 ? rw_.consumer_call(rw_.binding(i).var, "multiply", &at_g) : nullptr;
    const Expr* gamma = other_operand(mul, rw_.binding(i).var);
    if (gamma != nullptr && is_param(*gamma, norm_shape)) {
      args.push_back(*gamma);
      pattern.push_back(last);
      last = at_g;
      const CallNode* add = rw_.uses(rw_.binding(at_g).var) == 1 ? rw_.consumer_call(rw_.binding(at_g).var, "add", &at_b) : nullptr;
      const Expr* beta = other_operand(add, rw_.binding(at_g).var);
      if (beta != nullptr && is_param(*beta, norm_shape)) {
        args.push_back(*beta);
        pattern.push_back(last);
        last = at_b;
      }
    } else {
      Tensor ones = Tensor::empty(norm_shape, DataType::float32());
      auto* p = static_cast<float*>(ones.data());
      for (int64_t k = 0; k < ones.numel(); ++k) p[k] = 1.0f;
      args.push_back(Constant::make(ones));
    }
    Attrs attrs{{"axis", AttrValue(*axis)}, {"epsilon", AttrValue(*eps)}};
    Type ln_type;
    try {
      ln_type = infer_call_type("nn.layer_norm", args, attrs);
    } catch (const Error&) {
      return false;  // parameters the op does not take (e.g. leading 1s): leave the pattern
    }
    if (!type_equal(ln_type, rw_.binding(last).value.type())) return false;
    rw_.replace(last, Call::make("nn.layer_norm", std::move(args), std::move(attrs), ln_type));
    for (size_t k : pattern) rw_.drop(k);
    return true;
  }

  BindingRewriter rw_;
};

}  // namespace

Function recognize_layer_norm(const Function& f) { return LayerNormMatcher(f).run(); }

IRModule recognize_layer_norm(const IRModule& mod) {
  return rewrite_functions(mod, static_cast<Function (*)(const Function&)>(recognize_layer_norm));
}

}  // namespace anvil::graph::passes
