// Promoting expression builders: a + b, a * 2, i < n, min(a, b), exp(x), cast(t, x), ...
// These are what TE and hand-written IR use; node factories (XNode::make) stay strict.
// No constant folding happens here (that is the simplifier's job), except none at all.
//
// Dtype rules for binary operators and comparisons, applied in this order:
//   1. Equal dtypes: used as they are.
//   2. An immediate operand (IntImm/FloatImm, or a C++ int/double) meeting a non-immediate takes
//      the other's element type: an int literal fits int/uint/float types, a float literal only
//      float types (x_int * 0.5 is a TypeError: cast explicitly). The value must be
//      representable (ValueError otherwise).
//   3. Both int, both uint or both float, of different bits: the narrower is cast to the wider.
//   4. Integer meets float: the integer operand is cast to the float type.
//   5. A scalar meets a vector of L lanes: the scalar is broadcast to L lanes.
//   Anything else — bool or handle in arithmetic, int vs uint non-immediates, different lane
//   counts — is a TypeError naming the operator and both dtypes.
// Logical and/or/not take bool operands (a scalar bool is broadcast against a vector).
// C++ int literals are int32 immediates, double literals float32 immediates (before rule 2).
// Integer `/` is truncating division (C); use floordiv/floormod for index arithmetic.
// Equality builds nodes through eq()/ne(): operator== is deliberately not overloaded, so handle
// comparisons cannot be mistaken for IR (use same_as or structural_equal for those).
#pragma once

#include <cstdint>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

#define ANVIL_IR_DECLARE_BINARY(fn)                  \
  PrimExpr fn(const PrimExpr& a, const PrimExpr& b); \
  PrimExpr fn(const PrimExpr& a, int b);             \
  PrimExpr fn(int a, const PrimExpr& b);             \
  PrimExpr fn(const PrimExpr& a, int64_t b);         \
  PrimExpr fn(int64_t a, const PrimExpr& b);         \
  PrimExpr fn(const PrimExpr& a, double b);          \
  PrimExpr fn(double a, const PrimExpr& b);

ANVIL_IR_DECLARE_BINARY(operator+)
ANVIL_IR_DECLARE_BINARY(operator-)
ANVIL_IR_DECLARE_BINARY(operator*)
ANVIL_IR_DECLARE_BINARY(operator/)
ANVIL_IR_DECLARE_BINARY(operator<)
ANVIL_IR_DECLARE_BINARY(operator<=)
ANVIL_IR_DECLARE_BINARY(operator>)
ANVIL_IR_DECLARE_BINARY(operator>=)
ANVIL_IR_DECLARE_BINARY(add)
ANVIL_IR_DECLARE_BINARY(sub)
ANVIL_IR_DECLARE_BINARY(mul)
ANVIL_IR_DECLARE_BINARY(div)
ANVIL_IR_DECLARE_BINARY(floordiv)
ANVIL_IR_DECLARE_BINARY(floormod)
ANVIL_IR_DECLARE_BINARY(min)
ANVIL_IR_DECLARE_BINARY(max)
ANVIL_IR_DECLARE_BINARY(eq)
ANVIL_IR_DECLARE_BINARY(ne)
ANVIL_IR_DECLARE_BINARY(lt)
ANVIL_IR_DECLARE_BINARY(le)
ANVIL_IR_DECLARE_BINARY(gt)
ANVIL_IR_DECLARE_BINARY(ge)
#undef ANVIL_IR_DECLARE_BINARY

// -a (0 - a in a's dtype; a negative immediate for an immediate).
PrimExpr operator-(const PrimExpr& a);
PrimExpr logical_and(const PrimExpr& a, const PrimExpr& b);
PrimExpr logical_or(const PrimExpr& a, const PrimExpr& b);
PrimExpr logical_not(const PrimExpr& a);
PrimExpr operator&&(const PrimExpr& a, const PrimExpr& b);  // not short-circuit: builds And
PrimExpr operator||(const PrimExpr& a, const PrimExpr& b);
PrimExpr operator!(const PrimExpr& a);

// select(cond, t, f): t and f matched by the rules above; a scalar cond is fine for vectors.
PrimExpr select(const PrimExpr& cond, const PrimExpr& true_value, const PrimExpr& false_value);
// cast(t, x): x unchanged when it already has dtype t; a scalar x cast to a vector type is
// cast then broadcast.
PrimExpr cast(DataType dtype, const PrimExpr& value);
PrimExpr ramp(const PrimExpr& base, const PrimExpr& stride, int lanes);
PrimExpr broadcast(const PrimExpr& value, int lanes);
PrimExpr let(const Var& var, const PrimExpr& value, const PrimExpr& body);

// Math intrinsics (intrinsics.def): exp(x), pow(x, y), fma(a, b, c), ... Arguments are matched
// by the rules above; integer arguments of the float-only intrinsics, and float or bool ones of
// the bitwise intrinsics, are a TypeError naming the intrinsic and the dtype.
PrimExpr exp(const PrimExpr& x);
PrimExpr log(const PrimExpr& x);
PrimExpr sqrt(const PrimExpr& x);
PrimExpr rsqrt(const PrimExpr& x);
PrimExpr tanh(const PrimExpr& x);
PrimExpr erf(const PrimExpr& x);
PrimExpr sigmoid(const PrimExpr& x);
PrimExpr pow(const PrimExpr& x, const PrimExpr& y);
PrimExpr floor(const PrimExpr& x);
PrimExpr ceil(const PrimExpr& x);
PrimExpr round(const PrimExpr& x);
PrimExpr abs(const PrimExpr& x);
PrimExpr fma(const PrimExpr& a, const PrimExpr& b, const PrimExpr& c);
PrimExpr sin(const PrimExpr& x);
PrimExpr cos(const PrimExpr& x);
PrimExpr tan(const PrimExpr& x);
PrimExpr asin(const PrimExpr& x);
PrimExpr acos(const PrimExpr& x);
PrimExpr atan(const PrimExpr& x);
PrimExpr sinh(const PrimExpr& x);
PrimExpr cosh(const PrimExpr& x);
PrimExpr asinh(const PrimExpr& x);
PrimExpr acosh(const PrimExpr& x);
PrimExpr atanh(const PrimExpr& x);
PrimExpr log2(const PrimExpr& x);
PrimExpr log10(const PrimExpr& x);
PrimExpr trunc(const PrimExpr& x);
PrimExpr copysign(const PrimExpr& x, const PrimExpr& y);
// Float classification: bool results (lanes of x).
PrimExpr isnan(const PrimExpr& x);
PrimExpr isinf(const PrimExpr& x);
PrimExpr isfinite(const PrimExpr& x);
// Bitwise ops on int/uint (shift semantics in intrinsics.def).
PrimExpr bitwise_and(const PrimExpr& a, const PrimExpr& b);
PrimExpr bitwise_or(const PrimExpr& a, const PrimExpr& b);
PrimExpr bitwise_xor(const PrimExpr& a, const PrimExpr& b);
PrimExpr bitwise_not(const PrimExpr& a);
PrimExpr shift_left(const PrimExpr& x, const PrimExpr& k);
PrimExpr shift_right(const PrimExpr& x, const PrimExpr& k);
// Any intrinsic by op, arguments matched as above.
PrimExpr call(CallOp op, std::vector<PrimExpr> args);

}  // namespace anvil::ir
