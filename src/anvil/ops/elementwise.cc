// CPU implementations of the elementwise operators (graph/ops/elementwise.cc): one compute
// stage from a scalar formula over broadcast-loaded inputs (ops/cpu/broadcast.h), scheduled by
// the default injective schedule. Float16/bfloat16 tensors compute in float32 (cast in after
// the load, cast out before the store), as the formulas below are written for float32/64.
#include <cmath>
#include <map>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ops/cpu/broadcast.h"
#include "anvil/ops/cpu/schedule_injective.h"
#include "anvil/ops/strategy.h"

namespace anvil::ops {
namespace {

using graph::Attrs;
using ir::PrimExpr;
using V = std::vector<PrimExpr>;
using Formula = std::function<PrimExpr(const V& v, const Attrs& attrs)>;

PrimExpr c(const PrimExpr& like, double value) { return ir::make_const(like.dtype(), value); }

PrimExpr softplus(const PrimExpr& x) {
  // max(x, 0) + log(1 + exp(-|x|)): log(exp(x) + 1) without overflow for large x.
  return ir::max(x, c(x, 0)) + ir::log(c(x, 1) + ir::exp(-ir::abs(x)));
}

// A bound of clip as a constant of x's dtype; undefined when it cannot bind (outside the range
// of an integer dtype).
PrimExpr clip_bound(const PrimExpr& x, double v, bool is_min) {
  ir::DataType t = x.dtype();
  if (t.is_float()) return c(x, v);
  double lo = t.is_uint() ? 0.0 : -std::ldexp(1.0, t.bits() - 1), hi = std::ldexp(1.0, t.bits() - (t.is_uint() ? 0 : 1)) - 1;
  if (is_min && v <= lo) return PrimExpr();
  if (!is_min && v >= hi) return PrimExpr();
  v = is_min ? std::ceil(std::max(v, lo)) : std::floor(std::min(v, hi));
  return c(x, v);
}

// max/min that return NaN when either float operand is NaN, as ONNX Runtime's Max/Min/Clip do
// (the IR's max(a, b) is a < b ? b : a, which drops a NaN b; min drops a NaN a).
PrimExpr nan_max(const PrimExpr& a, const PrimExpr& b) {
  PrimExpr m = ir::max(a, b);
  return a.dtype().is_float() ? ir::select(ir::isnan(b), b, m) : m;
}
PrimExpr nan_min(const PrimExpr& a, const PrimExpr& b) {
  PrimExpr m = ir::min(a, b);
  return a.dtype().is_float() ? ir::select(ir::isnan(a), a, m) : m;
}

PrimExpr as_int(const PrimExpr& b) { return ir::select(b, ir::int_imm(1), ir::int_imm(0)); }

std::map<std::string, Formula> unary_formulas() {
  std::map<std::string, Formula> m;
  auto u = [&](const char* n, PrimExpr (*f)(const PrimExpr&)) { m[n] = [f](const V& v, const Attrs&) { return f(v[0]); }; };
  u("exp", ir::exp), u("log", ir::log), u("sqrt", ir::sqrt), u("rsqrt", ir::rsqrt), u("sin", ir::sin);
  u("cos", ir::cos), u("tan", ir::tan), u("asin", ir::asin), u("acos", ir::acos), u("atan", ir::atan);
  u("sinh", ir::sinh), u("cosh", ir::cosh), u("asinh", ir::asinh), u("acosh", ir::acosh), u("atanh", ir::atanh);
  u("tanh", ir::tanh), u("sigmoid", ir::sigmoid), u("erf", ir::erf), u("floor", ir::floor), u("ceil", ir::ceil);
  u("round", ir::round), u("trunc", ir::trunc), u("abs", ir::abs), u("isnan", ir::isnan), u("isfinite", ir::isfinite);
  u("bitwise_not", ir::bitwise_not), u("logical_not", ir::logical_not);
  m["negative"] = [](const V& v, const Attrs&) { return -v[0]; };
  m["reciprocal"] = [](const V& v, const Attrs&) { return c(v[0], 1) / v[0]; };
  m["relu"] = [](const V& v, const Attrs&) { return ir::max(v[0], c(v[0], 0)); };
  m["sign"] = [](const V& v, const Attrs&) {
    const PrimExpr& x = v[0];
    PrimExpr s = ir::select(x > c(x, 0), c(x, 1), ir::select(x < c(x, 0), c(x, -1), c(x, 0)));
    return x.dtype().is_float() ? ir::select(ir::isnan(x), x, s) : s;  // sign(NaN) = NaN
  };
  m["softplus"] = [](const V& v, const Attrs&) { return softplus(v[0]); };
  m["softsign"] = [](const V& v, const Attrs&) { return v[0] / (c(v[0], 1) + ir::abs(v[0])); };
  m["mish"] = [](const V& v, const Attrs&) { return v[0] * ir::tanh(softplus(v[0])); };
  m["hard_swish"] = [](const V& v, const Attrs&) {
    const PrimExpr& x = v[0];
    return x * ir::max(c(x, 0), ir::min(c(x, 1), x * c(x, 1.0 / 6) + c(x, 0.5)));
  };
  m["leaky_relu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    return ir::select(x < c(x, 0), x * c(x, graph::get_float(a, "alpha", 0.01)), x);
  };
  m["elu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    return ir::select(x < c(x, 0), c(x, graph::get_float(a, "alpha", 1.0)) * (ir::exp(x) - c(x, 1)), x);
  };
  m["selu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    double alpha = graph::get_float(a, "alpha", 1.67326319217681884765625);
    double gamma = graph::get_float(a, "gamma", 1.05070102214813232421875);
    return c(x, gamma) * ir::select(x <= c(x, 0), c(x, alpha) * (ir::exp(x) - c(x, 1)), x);
  };
  m["celu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    double alpha = graph::get_float(a, "alpha", 1.0);
    return ir::max(c(x, 0), x) + ir::min(c(x, 0), c(x, alpha) * (ir::exp(x / c(x, alpha)) - c(x, 1)));
  };
  m["hard_sigmoid"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    double alpha = graph::get_float(a, "alpha", 0.2), beta = graph::get_float(a, "beta", 0.5);
    return ir::max(c(x, 0), ir::min(c(x, 1), x * c(x, alpha) + c(x, beta)));
  };
  m["thresholded_relu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    return ir::select(x > c(x, graph::get_float(a, "alpha", 1.0)), x, c(x, 0));
  };
  m["gelu"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    if (graph::get_string(a, "approximate", "none") == "tanh") {
      PrimExpr inner = c(x, std::sqrt(2.0 / M_PI)) * (x + c(x, 0.044715) * x * x * x);
      return c(x, 0.5) * x * (c(x, 1) + ir::tanh(inner));
    }
    return c(x, 0.5) * x * (c(x, 1) + ir::erf(x * c(x, M_SQRT1_2)));
  };
  m["isinf"] = [](const V& v, const Attrs& a) {
    const PrimExpr& x = v[0];
    bool pos = graph::get_int(a, "detect_positive", 1) != 0, neg = graph::get_int(a, "detect_negative", 1) != 0;
    if (pos && neg) return ir::isinf(x);
    if (!pos && !neg) return ir::bool_imm(false);
    return ir::isinf(x) && (pos ? x > c(x, 0) : x < c(x, 0));
  };
  m["clip"] = [](const V& v, const Attrs& a) {
    PrimExpr x = v[0];
    if (graph::has_attr(a, "min"))
      if (PrimExpr lo = clip_bound(x, graph::get_float(a, "min"), true); lo.defined()) x = ir::max(x, lo);
    if (graph::has_attr(a, "max"))
      if (PrimExpr hi = clip_bound(x, graph::get_float(a, "max"), false); hi.defined()) x = nan_min(x, hi);
    return x;
  };
  m["cast"] = [](const V& v, const Attrs&) { return v[0]; };  // elementwise() converts to the out dtype
  return m;
}

std::map<std::string, Formula> binary_formulas() {
  std::map<std::string, Formula> m;
  auto b = [&](const char* n, PrimExpr (*f)(const PrimExpr&, const PrimExpr&)) {
    m[n] = [f](const V& v, const Attrs&) { return f(v[0], v[1]); };
  };
  b("add", ir::add), b("subtract", ir::sub), b("multiply", ir::mul), b("divide", ir::div);
  b("maximum", nan_max), b("minimum", nan_min), b("less", ir::lt), b("less_equal", ir::le);
  b("greater", ir::gt), b("greater_equal", ir::ge), b("logical_and", ir::logical_and), b("logical_or", ir::logical_or);
  b("bitwise_and", ir::bitwise_and), b("bitwise_or", ir::bitwise_or), b("bitwise_xor", ir::bitwise_xor);
  b("left_shift", ir::shift_left), b("right_shift", ir::shift_right);
  // Bool operands compare as 0/1 ints (arithmetic comparisons of bool are not IR).
  m["equal"] = [](const V& v, const Attrs&) {
    return v[0].dtype().is_bool() ? ir::eq(as_int(v[0]), as_int(v[1])) : ir::eq(v[0], v[1]);
  };
  m["not_equal"] = [](const V& v, const Attrs&) {
    return v[0].dtype().is_bool() ? ir::ne(as_int(v[0]), as_int(v[1])) : ir::ne(v[0], v[1]);
  };
  m["logical_xor"] = [](const V& v, const Attrs&) { return ir::ne(as_int(v[0]), as_int(v[1])); };
  m["floor_divide"] = [](const V& v, const Attrs&) {
    return v[0].dtype().is_float() ? ir::floor(v[0] / v[1]) : ir::floordiv(v[0], v[1]);
  };
  m["mod"] = [](const V& v, const Attrs& a) {
    const PrimExpr &x = v[0], &y = v[1];
    bool fmod = graph::get_int(a, "fmod", 0) != 0;
    if (x.dtype().is_float()) return x - (fmod ? ir::trunc(x / y) : ir::floor(x / y)) * y;
    if (x.dtype().is_uint()) return x - (x / y) * y;
    return fmod ? x - (x / y) * y : ir::floormod(x, y);
  };
  m["power"] = [](const V& v, const Attrs&) {
    if (v[0].dtype().is_float()) return ir::pow(v[0], v[1]);
    ir::DataType f64 = ir::DataType::float64();  // integers: exact for results below 2^53
    return ir::cast(v[0].dtype(), ir::round(ir::pow(ir::cast(f64, v[0]), ir::cast(f64, v[1]))));
  };
  m["prelu"] = [](const V& v, const Attrs&) { return ir::select(v[0] < c(v[0], 0), v[0] * v[1], v[0]); };
  m["where"] = [](const V& v, const Attrs&) { return ir::select(v[0], v[1], v[2]); };
  return m;
}

void add(const std::string& op, Formula f) {
  OpImplementation impl;
  impl.name = op + ".cpu";
  impl.compute = [op, f = std::move(f)](const graph::CallNode& call, const std::vector<te::Tensor>& inputs) {
    const graph::Type& t = call.type();
    const Attrs& attrs = call.attrs();
    te::Tensor out = elementwise(inputs, t.shape(), t.dtype(), [&](const V& v) { return f(v, attrs); }, op);
    return std::vector<te::Tensor>{out};
  };
  impl.schedule = schedule_injective;
  register_implementation(op, "cpu", std::move(impl));
}

}  // namespace

void register_elementwise_strategies() {
  for (auto& [name, f] : unary_formulas()) add(name, f);
  for (auto& [name, f] : binary_formulas()) add(name, f);
}

}  // namespace anvil::ops
