// canonicalize (canonicalize.h): batch norm folded into the preceding convolution.
#include "anvil/graph/passes/canonicalize.h"

#include <cmath>
#include <optional>
#include <unordered_map>

#include "anvil/graph/builder.h"
#include "anvil/graph/passes/substitute.h"

namespace anvil::graph::passes {
namespace {

// The values of a float32 constant with `n` elements, or nullopt.
std::optional<std::vector<double>> f32_values(const Expr& e, int64_t n) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || c->data().dtype() != DataType::float32() || c->data().numel() != n) return std::nullopt;
  std::vector<float> v(static_cast<size_t>(n));
  c->data().copy_to_bytes(v.data(), v.size() * sizeof(float));
  return std::vector<double>(v.begin(), v.end());
}

Expr f32_constant(const std::vector<int64_t>& shape, const std::vector<double>& values) {
  Tensor t = Tensor::empty(shape, DataType::float32());
  auto* p = static_cast<float*>(t.data());
  for (size_t i = 0; i < values.size(); ++i) p[i] = static_cast<float>(values[i]);
  return Constant::make(t);
}

class BatchNormFolder {
 public:
  explicit BatchNormFolder(const Function& f) : f_(f), uses_(use_counts(f)) {
    for (size_t i = 0; i < f.bindings().size(); ++i) producer_[f.bindings()[i].var.get()] = i;
  }

  Function run() {
    std::vector<Binding> bindings = f_.bindings();
    std::vector<bool> drop(bindings.size(), false);
    bool changed = false;
    for (size_t i = 0; i < bindings.size(); ++i) changed = fold(bindings, drop, i) || changed;
    if (!changed) return f_;
    std::vector<Binding> out;
    for (size_t i = 0; i < bindings.size(); ++i)
      if (!drop[i]) out.push_back(bindings[i]);
    return Function::make(f_.params(), std::move(out), f_.result());
  }

 private:
  // The binding that defines e when e is a var used once and bound to a call of `op`.
  std::optional<size_t> single_use_call(const Expr& e, const std::string& op) const {
    auto it = producer_.find(e.get());
    if (it == producer_.end() || uses_.at(e.get()) != 1) return std::nullopt;
    const auto* c = f_.bindings()[it->second].value.as<CallNode>();
    if (c == nullptr || c->op() != op) return std::nullopt;
    return it->second;
  }

  bool fold(std::vector<Binding>& bindings, std::vector<bool>& drop, size_t i) const {
    const auto* bn = bindings[i].value.as<CallNode>();
    if (bn == nullptr || bn->op() != "nn.batch_norm" || bn->args().size() != 5) return false;
    const Type& t = bn->type();
    if (!t.is_tensor() || !t.has_rank() || t.ndim() != 4 || t.dtype() != DataType::float32()) return false;
    if (get_int(bn->attrs(), "axis", 1) != 1) return false;
    std::optional<int64_t> channels = ir::as_const_int(t.dim(1));
    if (!channels) return false;
    int64_t c = *channels;
    // conv -> [add(bias)] -> batch_norm
    std::optional<size_t> add_at = single_use_call(bn->args()[0], "add");
    std::optional<std::vector<double>> old_bias;
    Expr conv_var = bn->args()[0];
    if (add_at) {
      const auto* add = f_.bindings()[*add_at].value.as<CallNode>();
      const Type& bt = add->args()[1].type();
      bool channel_shaped = bt.static_shape() == std::vector<int64_t>{1, c, 1, 1} ||
                            bt.static_shape() == std::vector<int64_t>{c, 1, 1};
      old_bias = channel_shaped ? f32_values(add->args()[1], c) : std::nullopt;
      if (!old_bias) return false;
      conv_var = add->args()[0];
    }
    std::optional<size_t> conv_at = single_use_call(conv_var, "nn.conv2d");
    if (!conv_at) return false;
    const auto* conv = f_.bindings()[*conv_at].value.as<CallNode>();
    std::optional<std::vector<int64_t>> wshape = conv->args()[1].type().static_shape();
    if (!wshape || wshape->size() != 4 || (*wshape)[0] != c) return false;
    int64_t per_channel = (*wshape)[1] * (*wshape)[2] * (*wshape)[3];
    std::optional<std::vector<double>> w = f32_values(conv->args()[1], c * per_channel);
    std::optional<std::vector<double>> gamma = f32_values(bn->args()[1], c), beta = f32_values(bn->args()[2], c);
    std::optional<std::vector<double>> mean = f32_values(bn->args()[3], c), var = f32_values(bn->args()[4], c);
    if (!w || !gamma || !beta || !mean || !var) return false;
    double eps = get_float(bn->attrs(), "epsilon", 1e-5);
    std::vector<double> bias(static_cast<size_t>(c));
    for (int64_t o = 0; o < c; ++o) {
      double scale = (*gamma)[o] / std::sqrt((*var)[o] + eps);
      for (int64_t k = 0; k < per_channel; ++k) (*w)[o * per_channel + k] *= scale;
      double b0 = old_bias ? (*old_bias)[o] : 0.0;
      bias[o] = (b0 - (*mean)[o]) * scale + (*beta)[o];
    }
    Expr new_conv = Call::make("nn.conv2d", {conv->args()[0], f32_constant(*wshape, *w)}, conv->attrs(), conv->type());
    std::vector<Expr> add_args{conv_var, f32_constant({1, c, 1, 1}, bias)};
    Type add_type = infer_call_type("add", add_args, {});
    if (!type_equal(add_type, t)) return false;
    bindings[*conv_at].value = new_conv;
    bindings[i].value = Call::make("add", std::move(add_args), {}, add_type);
    if (add_at) drop[*add_at] = true;
    return true;
  }

  const Function& f_;
  std::unordered_map<const ExprNode*, int> uses_;
  std::unordered_map<const ExprNode*, size_t> producer_;
};

}  // namespace

Function canonicalize(const Function& f) { return BatchNormFolder(f).run(); }

IRModule canonicalize(const IRModule& mod) {
  IRModule out = mod;
  for (auto& [name, f] : out.functions) f = canonicalize(f);
  return out;
}

}  // namespace anvil::graph::passes
