// Operators of the elementwise family: unary math and activations (same shape, same dtype
// unless noted), cast, binary arithmetic / comparison / logical / bitwise with numpy
// broadcasting, prelu and where.
//
//   unary float:   exp log sqrt rsqrt sin cos tan asin acos atan sinh cosh asinh acosh atanh tanh
//                  sigmoid erf floor ceil round (half to even) trunc reciprocal softplus softsign
//                  mish, leaky_relu(alpha) elu(alpha) selu(alpha, gamma) celu(alpha)
//                  hard_sigmoid(alpha, beta) hard_swish thresholded_relu(alpha) gelu(approximate)
//   unary numeric: negative abs sign relu clip(min, max: floats, either may be absent)
//   float -> bool: isnan isinf(detect_positive, detect_negative) isfinite
//   bool:          logical_not          integer: bitwise_not          any: cast(dtype)
//   binary (equal dtypes, broadcast): add subtract multiply divide floor_divide mod(fmod) power
//                  maximum minimum; equal not_equal less less_equal greater greater_equal (-> bool);
//                  logical_and logical_or logical_xor (bool); bitwise_and bitwise_or bitwise_xor
//                  left_shift right_shift (integer); prelu(data, slope) (-> data's shape)
//   where(cond bool, x, y): three-way broadcast, x's dtype.
// Float16/bfloat16 operands are accepted where float is; the kernels compute them in float32.
#include <functional>

#include "anvil/base/error.h"
#include "anvil/graph/attrs.h"
#include "anvil/graph/op_registry.h"
#include "anvil/graph/ops/op_util.h"
#include "anvil/graph/ops/ops.h"

namespace anvil::graph::ops {
namespace {

enum class DtypeRule { kFloat, kNumeric, kSigned, kBool, kInteger, kNumericOrBool, kAny };

bool accepts(DtypeRule r, DataType t) {
  switch (r) {
    case DtypeRule::kFloat: return t.is_float();
    case DtypeRule::kNumeric: return t.is_float() || t.is_int() || t.is_uint();
    case DtypeRule::kSigned: return t.is_float() || t.is_int();
    case DtypeRule::kBool: return t.is_bool();
    case DtypeRule::kInteger: return t.is_int() || t.is_uint();
    case DtypeRule::kNumericOrBool: return t.is_float() || t.is_int() || t.is_uint() || t.is_bool();
    case DtypeRule::kAny: return true;
  }
  return false;
}

const char* rule_text(DtypeRule r) {
  switch (r) {
    case DtypeRule::kFloat: return "a float dtype";
    case DtypeRule::kNumeric: return "an int, uint or float dtype";
    case DtypeRule::kSigned: return "an int or float dtype";
    case DtypeRule::kBool: return "bool";
    case DtypeRule::kInteger: return "an int or uint dtype";
    case DtypeRule::kNumericOrBool: return "a numeric or bool dtype";
    case DtypeRule::kAny: return "any dtype";
  }
  return "";
}

void check_dtype(const CallNode& call, size_t i, DtypeRule r) {
  DataType t = tensor_arg(call, i, false).dtype();
  if (!accepts(r, t)) type_error("argument ", i, " has dtype ", t, ", expected ", rule_text(r));
}

Type with_dtype(const Type& t, DataType dtype) {
  return t.has_rank() ? Type::tensor(t.shape(), dtype) : Type::tensor_any_rank(dtype);
}

void unary(const std::string& name, DtypeRule rule, std::string summary, bool bool_out = false) {
  register_op({name, 1, 1, OpPattern::kElemwise,
               [rule, bool_out](const CallNode& call) {
                 check_dtype(call, 0, rule);
                 const Type& t = tensor_arg(call, 0, false);
                 return bool_out ? with_dtype(t, DataType::boolean()) : t;
               },
               std::move(summary)});
}

// The broadcast shape of tensor arguments [0, n).
std::vector<PrimExpr> broadcast_args(const CallNode& call, size_t first, size_t n) {
  std::vector<PrimExpr> shape = tensor_arg(call, first).shape();
  for (size_t i = first + 1; i < n; ++i) shape = broadcast_shapes(shape, tensor_arg(call, i).shape());
  return shape;
}

void binary(const std::string& name, DtypeRule rule, std::string summary, bool bool_out = false) {
  register_op({name, 2, 2, OpPattern::kBroadcast,
               [rule, bool_out](const CallNode& call) {
                 check_dtype(call, 0, rule);
                 check_dtype(call, 1, rule);
                 check_same_dtype(call, 0, 1);
                 DataType out = bool_out ? DataType::boolean() : tensor_arg(call, 0).dtype();
                 return Type::tensor(broadcast_args(call, 0, 2), out);
               },
               std::move(summary)});
}

Type infer_cast(const CallNode& call) {
  const Type& t = tensor_arg(call, 0, false);
  DataType to = get_dtype(call.attrs(), "dtype");
  if (!to.is_tensor_element()) value_error("dtype ", to, " is not a tensor element type");
  return with_dtype(t, to);
}

Type infer_clip(const CallNode& call) {
  check_dtype(call, 0, DtypeRule::kNumeric);
  if (has_attr(call.attrs(), "min")) get_float(call.attrs(), "min");  // kind checks
  if (has_attr(call.attrs(), "max")) get_float(call.attrs(), "max");
  return tensor_arg(call, 0, false);
}

Type infer_prelu(const CallNode& call) {
  check_dtype(call, 0, DtypeRule::kFloat);
  check_same_dtype(call, 0, 1);
  const Type& data = tensor_arg(call, 0);
  std::vector<PrimExpr> b = broadcast_shapes(data.shape(), tensor_arg(call, 1).shape());
  if (b.size() != data.shape().size())
    value_error("slope of rank ", tensor_arg(call, 1).ndim(), " does not broadcast to data of rank ", data.ndim());
  return data;
}

Type infer_where(const CallNode& call) {
  check_dtype(call, 0, DtypeRule::kBool);
  check_same_dtype(call, 1, 2);
  return Type::tensor(broadcast_args(call, 0, 3), tensor_arg(call, 1).dtype());
}

Type infer_gelu(const CallNode& call) {
  check_dtype(call, 0, DtypeRule::kFloat);
  std::string a = get_string(call.attrs(), "approximate", "none");
  if (a != "none" && a != "tanh") value_error("approximate is '", a, "', expected \"none\" or \"tanh\"");
  return tensor_arg(call, 0, false);
}

}  // namespace

void register_elementwise_ops() {
  using R = DtypeRule;
  for (const char* n : {"exp", "log", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
                        "asinh", "acosh", "atanh", "tanh", "sigmoid", "erf", "floor", "ceil", "trunc", "reciprocal",
                        "softplus", "softsign", "mish", "hard_swish"})
    unary(n, R::kFloat, std::string("elementwise ") + n + " of a float tensor");
  unary("round", R::kFloat, "elementwise round half to even");
  unary("leaky_relu", R::kFloat, "x < 0 ? alpha * x : x (attr alpha, default 0.01)");
  unary("elu", R::kFloat, "x < 0 ? alpha * (exp(x) - 1) : x (attr alpha, default 1)");
  unary("selu", R::kFloat, "gamma * (x <= 0 ? alpha * (exp(x) - 1) : x) (attrs alpha, gamma)");
  unary("celu", R::kFloat, "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (attr alpha)");
  unary("hard_sigmoid", R::kFloat, "max(0, min(1, alpha * x + beta)) (attrs alpha 0.2, beta 0.5)");
  unary("thresholded_relu", R::kFloat, "x > alpha ? x : 0 (attr alpha, default 1)");
  register_op({"gelu", 1, 1, OpPattern::kElemwise, infer_gelu, "gelu, exact (erf) or approximate=\"tanh\""});
  unary("negative", R::kSigned, "elementwise -x");
  unary("abs", R::kNumeric, "elementwise |x|");
  unary("sign", R::kNumeric, "elementwise -1, 0 or 1");
  unary("relu", R::kSigned, "elementwise max(x, 0)");
  unary("isnan", R::kFloat, "x is NaN (bool)", true);
  unary("isinf", R::kFloat, "x is +-inf (bool; attrs detect_positive, detect_negative, default 1)", true);
  unary("isfinite", R::kFloat, "x is neither NaN nor inf (bool)", true);
  unary("logical_not", R::kBool, "elementwise not of a bool tensor");
  unary("bitwise_not", R::kInteger, "elementwise ~x of an integer tensor");
  register_op({"clip", 1, 1, OpPattern::kElemwise, infer_clip, "min(max(x, min), max) (float attrs, either absent)"});
  register_op({"cast", 1, 1, OpPattern::kElemwise, infer_cast, "conversion to attr dtype (float->int truncates)"});

  for (const char* n : {"add", "subtract", "multiply", "maximum", "minimum"})
    binary(n, R::kNumeric, std::string(n) + " with numpy broadcasting");
  binary("divide", R::kNumeric, "a / b with broadcasting; integers truncate toward zero");
  binary("floor_divide", R::kNumeric, "floor(a / b) with broadcasting");
  binary("mod", R::kNumeric, "remainder: fmod=0 takes the divisor's sign (python), fmod=1 the dividend's (C)");
  binary("power", R::kNumeric, "a ** b with broadcasting (integers through float64)");
  for (const char* n : {"equal", "not_equal"}) binary(n, R::kNumericOrBool, std::string(n) + " (bool result)", true);
  for (const char* n : {"less", "less_equal", "greater", "greater_equal"})
    binary(n, R::kNumeric, std::string(n) + " (bool result)", true);
  for (const char* n : {"logical_and", "logical_or", "logical_xor"})
    binary(n, R::kBool, std::string(n) + " of bool tensors");
  for (const char* n : {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"})
    binary(n, R::kInteger, std::string(n) + " of integer tensors");
  register_op({"prelu", 2, 2, OpPattern::kBroadcast, infer_prelu, "x < 0 ? slope * x : x, slope broadcast to x"});
  register_op({"where", 3, 3, OpPattern::kBroadcast, infer_where, "cond ? x : y with numpy broadcasting"});
}

}  // namespace anvil::graph::ops
