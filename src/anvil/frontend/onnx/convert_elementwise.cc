// ONNX converters of the elementwise family (graph/ops/elementwise.cc): unary math and
// activations, Cast/CastLike, Clip (attributes before opset 11, optional inputs after),
// binary arithmetic/comparison/logical/bitwise ops, the variadic Sum/Mean/Max/Min (chains of
// binary calls), BitShift, Mod, PRelu, Where and Gelu (opset 20). Identity is convert_transform's,
// Dropout convert_dropout's.
// Integer values known at import (shape arithmetic) propagate through Add/Sub/Mul/Div/Mod/Max/
// Min/Neg/Abs, the comparisons, And/Or/Xor/Not, Where and Cast (to integers and bool); a small
// integer constant cast to float folds to a constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "anvil/arith/simplify.h"
#include "anvil/base/error.h"
#include "anvil/frontend/onnx/convert_transform_util.h"
#include "anvil/frontend/onnx/converters.h"
#include "anvil/frontend/onnx/data_types.h"
#include "anvil/frontend/onnx/proto.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/minifloat.h"

namespace anvil::frontend::onnx {
namespace {

using graph::Attrs;
using graph::Expr;
using ir::PrimExpr;
using Values = std::vector<PrimExpr>;

// --- known values ----------------------------------------------------------------------------

// f over the known values of inputs 0 and 1 (equal counts, or one of them a single value);
// nullopt when a value is unknown or f declines (returns an undefined PrimExpr).
std::optional<Values> known_binary(ImportContext& ctx, const std::function<PrimExpr(PrimExpr, PrimExpr)>& f) {
  std::optional<Values> a = ctx.known_values(0), b = ctx.known_values(1);
  if (!a || !b) return std::nullopt;
  if (a->size() != b->size() && a->size() != 1 && b->size() != 1) return std::nullopt;
  size_t n = std::max(a->size(), b->size());
  Values out;
  for (size_t i = 0; i < n; ++i) {
    PrimExpr r = f((*a)[a->size() == 1 ? 0 : i], (*b)[b->size() == 1 ? 0 : i]);
    if (!r.defined()) return std::nullopt;
    out.push_back(arith::simplify(r));
  }
  return out;
}

// A comparison or logical op's result as 0/1 when it simplifies to a constant (n == n of a
// symbolic dim does), else undefined.
PrimExpr known_bool(const PrimExpr& e) {
  std::optional<int64_t> c = ir::as_const_int(arith::simplify(e));
  return c ? ir::int_imm(*c != 0 ? 1 : 0) : PrimExpr();
}

// The constant of both operands as a pair, for the ops that only fold constants.
std::optional<std::pair<int64_t, int64_t>> both_const(const PrimExpr& a, const PrimExpr& b) {
  auto ca = ir::as_const_int(a), cb = ir::as_const_int(b);
  if (!ca || !cb) return std::nullopt;
  return std::make_pair(*ca, *cb);
}

PrimExpr known_logical(const PrimExpr& a, const PrimExpr& b, int op) {  // 0 and, 1 or, 2 xor
  auto c = both_const(a, b);
  if (!c) return PrimExpr();
  bool x = c->first != 0, y = c->second != 0;
  return ir::int_imm(op == 0 ? (x && y) : op == 1 ? (x || y) : (x != y));
}

void propagate(ImportContext& ctx, const std::string& op_type) {
  static const std::map<std::string, std::function<PrimExpr(PrimExpr, PrimExpr)>> fns = {
      {"Add", [](PrimExpr a, PrimExpr b) { return a + b; }},
      {"Sub", [](PrimExpr a, PrimExpr b) { return a - b; }},
      {"Mul", [](PrimExpr a, PrimExpr b) { return a * b; }},
      {"Max", [](PrimExpr a, PrimExpr b) { return ir::max(a, b); }},
      {"Min", [](PrimExpr a, PrimExpr b) { return ir::min(a, b); }},
      {"Equal", [](PrimExpr a, PrimExpr b) { return known_bool(ir::eq(a, b)); }},
      {"Less", [](PrimExpr a, PrimExpr b) { return known_bool(ir::lt(a, b)); }},
      {"LessOrEqual", [](PrimExpr a, PrimExpr b) { return known_bool(ir::le(a, b)); }},
      {"Greater", [](PrimExpr a, PrimExpr b) { return known_bool(ir::gt(a, b)); }},
      {"GreaterOrEqual", [](PrimExpr a, PrimExpr b) { return known_bool(ir::ge(a, b)); }},
      {"And", [](PrimExpr a, PrimExpr b) { return known_logical(a, b, 0); }},
      {"Or", [](PrimExpr a, PrimExpr b) { return known_logical(a, b, 1); }},
      {"Xor", [](PrimExpr a, PrimExpr b) { return known_logical(a, b, 2); }},
      {"Div",
       [](PrimExpr a, PrimExpr b) {
         auto ca = ir::as_const_int(a), cb = ir::as_const_int(b);
         if (ca && cb && *cb != 0) return ir::int_imm(*ca / *cb, a.dtype());  // C truncation, as ONNX
         if (cb && *cb > 0) return ir::floordiv(a, b);  // dims are >= 0: truncation == floor
         return PrimExpr();
       }},
  };
  auto it = fns.find(op_type);
  if (it == fns.end() || ctx.num_inputs() != 2) return;
  if (std::optional<Values> v = known_binary(ctx, it->second)) ctx.set_known_values(0, std::move(*v));
}

// Neg/Abs/Not of known values (LayerNormalization's function body: ConstantOfShape(Neg(axis))).
void propagate_unary(ImportContext& ctx, const std::string& op_type) {
  std::optional<Values> a = ctx.known_values(0);
  if (!a) return;
  Values out;
  for (const PrimExpr& x : *a) {
    std::optional<int64_t> c = ir::as_const_int(x);
    if (op_type == "Neg") out.push_back(arith::simplify(-x));
    else if (op_type == "Abs" && c) out.push_back(ir::int_imm(*c < 0 ? -*c : *c, x.dtype()));
    else if (op_type == "Not" && c) out.push_back(ir::int_imm(*c == 0 ? 1 : 0));
    else return;
  }
  ctx.set_known_values(0, std::move(out));
}

// --- helpers ---------------------------------------------------------------------------------

DataType dtype_of(const Expr& e) { return e.type().dtype(); }

// A 0-d constant of dtype with value v.
Expr scalar(ImportContext& ctx, DataType dtype, double v) {
  Tensor t = Tensor::empty(std::span<const int64_t>(), dtype);
  void* p = t.data();
  if (dtype == DataType::float32()) *static_cast<float*>(p) = static_cast<float>(v);
  else if (dtype == DataType::float64()) *static_cast<double*>(p) = v;
  else if (dtype == DataType::int64()) *static_cast<int64_t*>(p) = static_cast<int64_t>(v);
  else if (dtype == DataType::int32()) *static_cast<int32_t*>(p) = static_cast<int32_t>(v);
  else {
    Tensor f = Tensor::empty(std::span<const int64_t>(), DataType::float64());
    *static_cast<double*>(f.data()) = v;
    return ctx.emit("cast", {ctx.constant(f)}, {{"dtype", dtype}});
  }
  return ctx.constant(t);
}

// The single element of a constant tensor as a double.
double scalar_value(ImportContext& ctx, const Tensor& t, const std::string& what) {
  if (t.numel() != 1) ctx.bad_model(str_cat(what, " has ", t.numel(), " elements, expected 1"));
  const void* p = t.data();
  DataType d = t.dtype();
  if (d == DataType::float32()) return *static_cast<const float*>(p);
  if (d == DataType::float64()) return *static_cast<const double*>(p);
  if (d == DataType::int64()) return static_cast<double>(*static_cast<const int64_t*>(p));
  if (d == DataType::int32()) return *static_cast<const int32_t*>(p);
  if (d == DataType::int8()) return *static_cast<const int8_t*>(p);
  if (d == DataType::uint8()) return *static_cast<const uint8_t*>(p);
  if (d == DataType::int16()) return *static_cast<const int16_t*>(p);
  if (d == DataType::uint16()) return *static_cast<const uint16_t*>(p);
  if (d == DataType::uint32()) return *static_cast<const uint32_t*>(p);
  ctx.unsupported(str_cat(what, " of dtype ", d, " (a constant bound is read as a number)"));
  return 0;  // unreachable (gcc does not see [[noreturn]] through the virtual call)
}

Converter unary(std::string op, std::vector<std::pair<std::string, double>> float_attrs = {}) {
  return [op, float_attrs](ImportContext& ctx) -> std::vector<Expr> {
    Attrs attrs;
    for (const auto& [name, fallback] : float_attrs) attrs[name] = ctx.attr_float(name, fallback);
    propagate_unary(ctx, ctx.node().op_type());
    return {ctx.emit(op, {ctx.input(0)}, attrs)};
  };
}

// A binary op; `variadic` chains any number of inputs (Sum/Max/Min).
Converter binary(std::string op, bool variadic = false) {
  return [op, variadic](ImportContext& ctx) -> std::vector<Expr> {
    int n = ctx.num_inputs();
    if (n < 1 || (!variadic && n != 2)) ctx.bad_model(str_cat("has ", n, " inputs, expected ", variadic ? "1 or more" : "2"));
    propagate(ctx, ctx.node().op_type());
    Expr acc = ctx.input(0);
    for (int i = 1; i < n; ++i) acc = ctx.emit(op, {acc, ctx.input(i)});
    return {acc};
  };
}

std::vector<Expr> convert_mean(ImportContext& ctx) {
  std::vector<Expr> sum = binary("add", true)(ctx);
  if (ctx.num_inputs() == 1) return sum;
  return {ctx.emit("divide", {sum[0], scalar(ctx, dtype_of(sum[0]), ctx.num_inputs())})};
}

// Cast / CastLike to float8_e8m0fnu (opset 24+): a power of two from 2^-127 to 2^127, chosen
// by round_mode: "up" (the default) the smallest one >= x, "down" the largest one <= x,
// "nearest" the nearer one with a tie (1.5 * 2^e) up. saturate=1 (the default) first clamps x to
// [2^-127, 2^127] (zero, negatives and -inf to 2^-127, inf to 2^127), saturate=0 makes what is
// outside it NaN, as the Cast text's table and ONNX Runtime say (onnx's reference instead keeps
// inf NaN, reads a negative as its magnitude and rounds float32 subnormals up by their field).
// The tensor IR's cast rounds "nearest" (ir/minifloat.h); "up" / "down" then step the result d
// once: 2d where d < x, d / 2 where d > x, both exact, and the final cast exact too.
Expr cast_to_e8m0(ImportContext& ctx, Expr x) {
  const std::string mode = ctx.attr_string("round_mode", "up");
  if (mode != "up" && mode != "down" && mode != "nearest")
    ctx.bad_model(str_cat("round_mode is '", mode, "', expected 'up', 'down' or 'nearest'"));
  const DataType f32 = DataType::float32(), e8m0 = DataType::float8_e8m0fnu();
  if (dtype_of(x) != f32) x = ctx.emit("cast", {x}, {{"dtype", f32}});
  Expr lo = scalar(ctx, f32, std::ldexp(1.0, -127)), hi = scalar(ctx, f32, std::ldexp(1.0, 127));
  if (ctx.attr_int("saturate", 1) != 0) {
    x = ctx.emit("where", {ctx.emit("greater", {x, hi}), hi, x});  // NaN compares false: stays NaN
    x = ctx.emit("where", {ctx.emit("less", {x, lo}), lo, x});
  } else {
    Expr inside = ctx.emit("logical_and", {ctx.emit("greater_equal", {x, lo}), ctx.emit("less_equal", {x, hi})});
    x = ctx.emit("where", {inside, x, scalar(ctx, f32, std::numeric_limits<double>::quiet_NaN())});
  }
  Expr n = ctx.emit("cast", {x}, {{"dtype", e8m0}});
  if (mode == "nearest") return n;
  Expr d = ctx.emit("cast", {n}, {{"dtype", f32}});
  Expr step = mode == "up" ? ctx.emit("where", {ctx.emit("less", {d, x}), ctx.emit("multiply", {d, scalar(ctx, f32, 2.0)}), d})
                           : ctx.emit("where", {ctx.emit("greater", {d, x}), ctx.emit("multiply", {d, scalar(ctx, f32, 0.5)}), d});
  return ctx.emit("cast", {step}, {{"dtype", e8m0}});
}

// Cast / CastLike to `to`. The tensor IR's cast to a float8 type gives inf / NaN for what is out
// of range (ONNX's saturate=0); saturate=1 (the default, opset 19+) first clamps to the largest
// finite value in float32, NaN staying NaN, as ONNX's reference (np.clip, then the conversion).
Expr cast_to(ImportContext& ctx, Expr x, DataType to) {
  if (to == DataType::float8_e8m0fnu()) return cast_to_e8m0(ctx, x);
  bool float8 = to.is_low_precision_float() && to.bits() == 8;
  if (!float8 || ctx.attr_int("saturate", 1) == 0 || dtype_of(x) == DataType::boolean())
    return ctx.emit("cast", {x}, {{"dtype", to}});
  if (dtype_of(x) != DataType::float32()) x = ctx.emit("cast", {x}, {{"dtype", DataType::float32()}});
  const double max = ir::minifloat_format(to)->max_finite();
  Expr hi = scalar(ctx, DataType::float32(), max), lo = scalar(ctx, DataType::float32(), -max);
  x = ctx.emit("where", {ctx.emit("greater", {x, hi}), hi, x});
  x = ctx.emit("where", {ctx.emit("less", {x, lo}), lo, x});
  return ctx.emit("cast", {x}, {{"dtype", to}});
}

std::vector<Expr> convert_cast(ImportContext& ctx) {
  DataType to = anvil_dtype_or_throw(static_cast<int32_t>(ctx.attr_int("to")), "Cast's 'to'");
  if (auto v = ctx.known_values(0); v && (to.is_int() || to.is_uint()) && !to.is_sub_byte_int()) {
    ctx.set_known_values(0, *v);
  } else if (v && to == DataType::boolean()) {  // 0/1 of constants (a Where's condition)
    Values out;
    for (const PrimExpr& x : *v) {
      PrimExpr b = known_bool(ir::ne(x, ir::int_imm(0, x.dtype())));
      if (!b.defined()) break;
      out.push_back(b);
    }
    if (out.size() == v->size()) ctx.set_known_values(0, std::move(out));
  }
  // A small integer constant cast to float folds at import, so that an op that needs the value at
  // import sees it (the window functions' expansion: Range(0, Cast(size), 1)).
  if (to == DataType::float32() || to == DataType::float64()) {
    std::optional<Tensor> c = ctx.constant_input(0);
    if (c && c->numel() <= kMaxKnown && (c->dtype().is_int() || c->dtype().is_uint())) {
      std::vector<int64_t> ints = tensor_ints(*c);
      Tensor out = Tensor::empty(std::span<const int64_t>(c->shape()), to);
      for (size_t i = 0; i < ints.size(); ++i) {
        if (to == DataType::float32()) static_cast<float*>(out.data())[i] = static_cast<float>(ints[i]);
        else static_cast<double*>(out.data())[i] = static_cast<double>(ints[i]);
      }
      return {ctx.constant(out)};
    }
  }
  Expr x = ctx.input(0);
  if (dtype_of(x) == to) return {x};
  return {cast_to(ctx, x, to)};
}

std::vector<Expr> convert_cast_like(ImportContext& ctx) {
  Expr x = ctx.input(0);
  DataType to = dtype_of(ctx.input(1));
  if (dtype_of(x) == to) return {x};
  return {cast_to(ctx, x, to)};
}

std::vector<Expr> convert_clip(ImportContext& ctx) {
  Expr x = ctx.input(0);
  Attrs attrs;
  if (ctx.opset() < 11) {
    double lo = ctx.attr_float("min", -std::numeric_limits<double>::infinity());
    double hi = ctx.attr_float("max", std::numeric_limits<double>::infinity());
    if (std::isfinite(lo)) attrs["min"] = lo;
    if (std::isfinite(hi)) attrs["max"] = hi;
    return {ctx.emit("clip", {x}, attrs)};
  }
  // Bounds as inputs: constant ones become attributes, others maximum/minimum calls.
  const char* names[] = {"min", "max"};
  std::vector<Expr> dynamic(3);
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    if (std::optional<Tensor> t = ctx.constant_input(i)) attrs[names[i - 1]] = scalar_value(ctx, *t, names[i - 1]);
    else dynamic[i] = ctx.input(i);
  }
  Expr out = attrs.empty() ? x : ctx.emit("clip", {x}, attrs);
  if (dynamic[1].defined()) out = ctx.emit("maximum", {out, dynamic[1]});
  if (dynamic[2].defined()) out = ctx.emit("minimum", {out, dynamic[2]});
  return {out};
}

// Pow(T, T1): mixed dtypes compute in the float one (an integer base with a float exponent is
// cast back, truncating, as ONNX Runtime does); two integer dtypes in the base's.
std::vector<Expr> convert_pow(ImportContext& ctx) {
  Expr x = ctx.input(0), y = ctx.input(1);
  DataType tx = dtype_of(x), ty = dtype_of(y);
  if (tx == ty) return {ctx.emit("power", {x, y})};
  if (!tx.is_float() && ty.is_float()) {
    Expr p = ctx.emit("power", {ctx.emit("cast", {x}, {{"dtype", ty}}), y});
    return {ctx.emit("cast", {p}, {{"dtype", tx}})};
  }
  return {ctx.emit("power", {x, ctx.emit("cast", {y}, {{"dtype", tx}})})};
}

std::vector<Expr> convert_where(ImportContext& ctx) {
  std::optional<Values> c = ctx.known_values(0), a = ctx.known_values(1), b = ctx.known_values(2);
  // Equal counts, or single values broadcast against the others.
  size_t n = c && a && b ? std::max({c->size(), a->size(), b->size()}) : 0;
  auto fits = [n](const std::optional<Values>& v) { return v->size() == n || v->size() == 1; };
  if (n > 0 && fits(c) && fits(a) && fits(b)) {
    auto at = [](const Values& v, size_t i) { return v[v.size() == 1 ? 0 : i]; };
    Values out;
    bool ok = true;
    for (size_t i = 0; i < n && ok; ++i) {
      auto ci = ir::as_const_int(at(*c, i));
      ok = ci.has_value();
      if (ok) out.push_back(*ci ? at(*a, i) : at(*b, i));
    }
    if (ok) ctx.set_known_values(0, std::move(out));
  }
  return {ctx.emit("where", {ctx.input(0), ctx.input(1), ctx.input(2)})};
}

std::vector<Expr> convert_bit_shift(ImportContext& ctx) {
  std::string dir = ctx.attr_string("direction");
  if (dir != "LEFT" && dir != "RIGHT") ctx.bad_model(str_cat("direction is '", dir, "', expected LEFT or RIGHT"));
  return {ctx.emit(dir == "LEFT" ? "left_shift" : "right_shift", {ctx.input(0), ctx.input(1)})};
}

std::vector<Expr> convert_mod(ImportContext& ctx) {
  int64_t fmod = ctx.attr_int("fmod", 0);
  Expr a = ctx.input(0);
  if (dtype_of(a).is_float() && fmod == 0) ctx.bad_model("Mod of float tensors requires fmod=1");
  // Known integers: fmod=0 takes the divisor's sign (floor mod), fmod=1 the dividend's (C %).
  // A symbolic dim mod a positive constant is floormod either way (dims are >= 0).
  std::optional<Values> v = known_binary(ctx, [fmod](PrimExpr x, PrimExpr y) {
    auto cy = ir::as_const_int(y);
    if (!cy || *cy == 0) return PrimExpr();
    if (auto cx = ir::as_const_int(x)) {
      int64_t r = *cx % *cy;
      if (fmod == 0 && r != 0 && ((r < 0) != (*cy < 0))) r += *cy;
      return ir::int_imm(r, x.dtype());
    }
    return *cy > 0 ? ir::floormod(x, y) : PrimExpr();
  });
  if (v) ctx.set_known_values(0, std::move(*v));
  return {ctx.emit("mod", {a, ctx.input(1)}, {{"fmod", fmod}})};
}

std::vector<Expr> convert_is_inf(ImportContext& ctx) {
  return {ctx.emit("isinf", {ctx.input(0)},
                   {{"detect_positive", ctx.attr_int("detect_positive", 1)},
                    {"detect_negative", ctx.attr_int("detect_negative", 1)}})};
}

std::vector<Expr> convert_gelu(ImportContext& ctx) {
  return {ctx.emit("gelu", {ctx.input(0)}, {{"approximate", ctx.attr_string("approximate", "none")}})};
}

}  // namespace

void register_elementwise_converters() {
  const std::vector<std::pair<const char*, const char*>> unaries = {
      {"Abs", "abs"},       {"Neg", "negative"},   {"Exp", "exp"},       {"Log", "log"},         {"Sqrt", "sqrt"},
      {"Reciprocal", "reciprocal"}, {"Sin", "sin"}, {"Cos", "cos"},      {"Tan", "tan"},         {"Asin", "asin"},
      {"Acos", "acos"},     {"Atan", "atan"},      {"Sinh", "sinh"},     {"Cosh", "cosh"},       {"Asinh", "asinh"},
      {"Acosh", "acosh"},   {"Atanh", "atanh"},    {"Tanh", "tanh"},     {"Sigmoid", "sigmoid"}, {"Erf", "erf"},
      {"Floor", "floor"},   {"Ceil", "ceil"},      {"Round", "round"},   {"Sign", "sign"},       {"Relu", "relu"},
      {"Softplus", "softplus"}, {"Softsign", "softsign"}, {"Mish", "mish"}, {"HardSwish", "hard_swish"},
      {"Not", "logical_not"}, {"BitwiseNot", "bitwise_not"}, {"IsNaN", "isnan"},
  };
  for (const auto& [onnx, op] : unaries) register_converter(onnx, unary(op));
  register_converter("LeakyRelu", unary("leaky_relu", {{"alpha", 0.01}}));
  register_converter("Elu", unary("elu", {{"alpha", 1.0}}));
  register_converter("Selu", unary("selu", {{"alpha", 1.67326319217681884765625}, {"gamma", 1.05070102214813232421875}}));
  register_converter("Celu", unary("celu", {{"alpha", 1.0}}));
  register_converter("HardSigmoid", unary("hard_sigmoid", {{"alpha", 0.2}, {"beta", 0.5}}));
  register_converter("ThresholdedRelu", unary("thresholded_relu", {{"alpha", 1.0}}));
  register_converter("Gelu", convert_gelu);
  register_converter("IsInf", convert_is_inf);
  register_converter("Cast", convert_cast);
  register_converter("CastLike", convert_cast_like);
  register_converter("Clip", convert_clip);
  const std::vector<std::pair<const char*, const char*>> binaries = {
      {"Add", "add"}, {"Sub", "subtract"}, {"Mul", "multiply"}, {"Div", "divide"}, {"Equal", "equal"},
      {"Less", "less"}, {"LessOrEqual", "less_equal"}, {"Greater", "greater"}, {"GreaterOrEqual", "greater_equal"},
      {"And", "logical_and"}, {"Or", "logical_or"}, {"Xor", "logical_xor"}, {"BitwiseAnd", "bitwise_and"},
      {"BitwiseOr", "bitwise_or"}, {"BitwiseXor", "bitwise_xor"}, {"PRelu", "prelu"},
  };
  for (const auto& [onnx, op] : binaries) register_converter(onnx, binary(op));
  register_converter("Sum", binary("add", true));
  register_converter("Max", binary("maximum", true));
  register_converter("Min", binary("minimum", true));
  register_converter("Mean", convert_mean);
  register_converter("Pow", convert_pow);
  register_converter("Where", convert_where);
  register_converter("BitShift", convert_bit_shift);
  register_converter("Mod", convert_mod);
}

}  // namespace anvil::frontend::onnx
