// recognize_gelu (recognize_gelu.h): spelled-out GELU into one gelu call.
#include "anvil/graph/passes/recognize_gelu.h"

#include <cmath>
#include <optional>

#include "anvil/graph/builder.h"
#include "anvil/graph/passes/binding_rewriter.h"

namespace anvil::graph::passes {
namespace {

bool is_scalar(const Expr& e, double want) {
  const auto* c = e.as<ConstantNode>();
  if (c == nullptr || c->data().dtype() != DataType::float32() || c->data().numel() != 1) return false;
  float v;
  c->data().copy_to_bytes(&v, sizeof v);
  return std::abs(double(v) - want) <= 1e-6 * std::abs(want);
}

class GeluMatcher {
 public:
  explicit GeluMatcher(const Function& f) : rw_(f) {}

  Function run() {
    for (size_t i = 0; i < rw_.size(); ++i) {
      matched_.clear();
      const CallNode* root = rw_.call_at(i);
      if (root == nullptr || root->op() != "multiply" || root->type().dtype() != DataType::float32()) continue;
      Expr x;
      std::string approximate;
      if (match_exact(*root, &x)) approximate = "none";
      else if (matched_.clear(), match_tanh(*root, &x)) approximate = "tanh";
      else continue;
      Attrs attrs{{"approximate", AttrValue(approximate)}};
      Type t = infer_call_type("gelu", {x}, attrs);
      if (!type_equal(t, root->type())) continue;
      rw_.replace(i, Call::make("gelu", {x}, std::move(attrs), t));
      for (size_t k : matched_) rw_.drop(k);
    }
    return rw_.result();
  }

 private:
  // The call of `op` bound to the single-use var `e` (recorded as matched), or null.
  const CallNode* inner(const Expr& e, const std::string& op) {
    size_t at;
    const CallNode* c = rw_.producer_call(e, op, 1, &at);
    if (c == nullptr || c->args().size() != (op == "erf" || op == "tanh" ? 1u : 2u)) return nullptr;
    matched_.push_back(at);
    return c;
  }

  // Calls f(a, b) for both operand orders of a commutative call until it returns true; what a
  // failed attempt matched is forgotten.
  template <typename F>
  bool either(const CallNode& c, F&& f) {
    const size_t mark = matched_.size();
    if (f(c.args()[0], c.args()[1])) return true;
    matched_.resize(mark);
    if (f(c.args()[1], c.args()[0])) return true;
    matched_.resize(mark);
    return false;
  }

  // 1 + g(inner) where `fn` is "erf" or "tanh"; the function's argument goes to *arg.
  bool one_plus(const Expr& e, const std::string& fn, Expr* arg) {
    size_t mark = matched_.size();
    const CallNode* add = inner(e, "add");
    bool ok = add && either(*add, [&](const Expr& a, const Expr& b) {
      if (!is_scalar(b, 1.0)) return false;
      const CallNode* g = inner(a, fn);
      if (g) *arg = g->args()[0];
      return g != nullptr;
    });
    if (!ok) matched_.resize(mark);
    return ok;
  }

  // x * 0.5 * (1 + erf(x / sqrt 2)): root = (x * B) * 0.5, or (x * 0.5) * B, any operand order.
  bool match_exact(const CallNode& root, Expr* x) {
    auto erf_of_x = [&](const Expr& b, const Expr& xv) {
      Expr d;
      size_t mark = matched_.size();
      if (!one_plus(b, "erf", &d)) return false;
      const CallNode* scale = inner(d, "divide");
      bool ok = scale && scale->args()[0].same_as(xv) && is_scalar(scale->args()[1], M_SQRT2);
      if (!ok) {
        if (scale) matched_.pop_back();
        scale = inner(d, "multiply");
        ok = scale && either(*scale, [&](const Expr& a, const Expr& c) { return a.same_as(xv) && is_scalar(c, M_SQRT1_2); });
      }
      if (!ok) matched_.resize(mark);
      return ok;
    };
    return either(root, [&](const Expr& a, const Expr& c) {
      size_t mark = matched_.size();
      const CallNode* prod = inner(a, "multiply");
      if (prod == nullptr) return false;
      // (x * B) * 0.5
      if (is_scalar(c, 0.5) && either(*prod, [&](const Expr& xv, const Expr& b) {
            if (!xv.as<VarNode>() || !erf_of_x(b, xv)) return false;
            *x = xv;
            return true;
          }))
        return true;
      // (x * 0.5) * B
      bool ok = either(*prod, [&](const Expr& xv, const Expr& half) { return is_scalar(half, 0.5) && erf_of_x(c, xv) && (*x = xv, true); });
      if (!ok) matched_.resize(mark);
      return ok;
    });
  }

  // x^3 as power(x, 3) or (x * x) * x.
  bool cube_of(const Expr& e, const Expr& xv) {
    size_t mark = matched_.size();
    if (const CallNode* p = inner(e, "power"); p && p->args()[0].same_as(xv) && is_scalar(p->args()[1], 3.0)) return true;
    matched_.resize(mark);
    const CallNode* m = inner(e, "multiply");
    bool ok = m && either(*m, [&](const Expr& sq, const Expr& x1) {
      if (!x1.same_as(xv)) return false;
      const CallNode* s = inner(sq, "multiply");
      return s && s->args()[0].same_as(xv) && s->args()[1].same_as(xv);
    });
    if (!ok) matched_.resize(mark);
    return ok;
  }

  // sqrt(2/pi) * (x + 0.044715 * x^3): the tanh's argument, x given.
  bool tanh_arg_of_x(const Expr& t, const Expr& xv) {
    size_t mark = matched_.size();
    const CallNode* m = inner(t, "multiply");
    bool ok = m && either(*m, [&](const Expr& sum, const Expr& k) {
      if (!is_scalar(k, std::sqrt(2.0 / M_PI))) return false;
      const CallNode* add = inner(sum, "add");
      return add && either(*add, [&](const Expr& x1, const Expr& cub) {
        if (!x1.same_as(xv)) return false;
        const CallNode* cm = inner(cub, "multiply");
        return cm && either(*cm, [&](const Expr& x3, const Expr& c) { return is_scalar(c, 0.044715) && cube_of(x3, xv); });
      });
    });
    if (!ok) matched_.resize(mark);
    return ok;
  }

  // (0.5 * x) * (1 + tanh(...)) or (x * (1 + tanh(...))) * 0.5, any operand order.
  bool match_tanh(const CallNode& root, Expr* x) {
    auto tail = [&](const Expr& b, const Expr& xv) {
      Expr t;
      size_t mark = matched_.size();
      bool ok = one_plus(b, "tanh", &t) && tanh_arg_of_x(t, xv);
      if (!ok) matched_.resize(mark);
      return ok;
    };
    return either(root, [&](const Expr& a, const Expr& c) {
      size_t mark = matched_.size();
      const CallNode* prod = inner(a, "multiply");
      if (prod == nullptr) return false;
      bool ok = either(*prod, [&](const Expr& xv, const Expr& other) {
        if (!xv.as<VarNode>()) return false;
        if (is_scalar(other, 0.5) && tail(c, xv)) return *x = xv, true;    // (x * 0.5) * B
        if (is_scalar(c, 0.5) && tail(other, xv)) return *x = xv, true;    // (x * B) * 0.5
        return false;
      });
      if (!ok) matched_.resize(mark);
      return ok;
    });
  }

  BindingRewriter rw_;
  std::vector<size_t> matched_;
};

}  // namespace

Function recognize_gelu(const Function& f) { return GeluMatcher(f).run(); }

IRModule recognize_gelu(const IRModule& mod) {
  return rewrite_functions(mod, static_cast<Function (*)(const Function&)>(recognize_gelu));
}

}  // namespace anvil::graph::passes
