// Reference evaluator of expressions: the meaning of each node, executed on the host. Used by
// the simplifier's randomized tests, TE tests and the TIR interpreter (which supplies buffer
// loads). Slow and simple on purpose.
//
// Semantics (what code generators must match):
//  - Integers wrap to their dtype's width (two's complement); uint compares unsigned.
//  - Div truncates toward zero, FloorDiv/FloorMod round toward negative infinity; a zero
//    divisor is a ValueError (never undefined behaviour).
//  - Floats compute in double; float32, float16 and bfloat16 results are rounded to their type
//    (nearest, ties to even; float16.h) after every operation, cast and immediate — as the
//    generated code does (LLVM's half ops round per operation). For + - * / the double result
//    rounded once equals the correctly rounded result; intrinsics (exp, tanh, ...) are the
//    double result rounded to the type, which a back end computing float16 math through
//    float32 may miss by an ulp.
//  - Cast float -> int truncates toward zero (ValueError when out of range or NaN); any -> bool
//    is "!= 0".
//  - Intrinsics follow <cmath>; round is round-half-to-even (numpy), sigmoid = 1 / (1 + exp(-x)),
//    rsqrt = 1 / sqrt(x); isnan/isinf/isfinite give bools; bitwise ops and shifts work on the
//    integer bits as intrinsics.def says (an over-wide shift is 0 or -1, not an error).
//  - Vectors evaluate lane by lane.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <variant>
#include <vector>

#include "anvil/ir/buffer.h"
#include "anvil/ir/expr.h"

namespace anvil::ir {

// One lane: i holds integer/bool lanes (uint64 as its bit pattern), f float lanes.
struct EvalScalar {
  int64_t i = 0;
  double f = 0;
};

// A value: a dtype and one scalar per lane.
struct EvalValue {
  DataType dtype;
  std::vector<EvalScalar> lanes;

  static EvalValue of_int(int64_t v, DataType t = DataType::int64());
  static EvalValue of_float(double v, DataType t = DataType::float64());
  int64_t as_int(int lane = 0) const { return lanes.at(static_cast<size_t>(lane)).i; }
  double as_float(int lane = 0) const;  // float lanes, or integer lanes converted
};

// Var bindings for the convenience functions: int64 for integer/bool vars, double for floats.
using Bindings = std::unordered_map<Var, std::variant<int64_t, double>, NodeIdentityHash, NodeIdentityEqual>;

// The value of a scalar integer/uint/bool expression (bool: 0 or 1). Unbound vars, loads and
// non-integer results throw ValueError/TypeError.
int64_t eval_int(const PrimExpr& e, const Bindings& bindings = {});
// The value of a scalar numeric expression as a double.
double eval_float(const PrimExpr& e, const Bindings& bindings = {});

// The evaluator; subclass and override load() to give buffer loads a meaning.
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Binds v (value's dtype must equal v's dtype; scalars given for vars of other int/float
  // types are converted). Rebinding replaces.
  void bind(const Var& v, EvalValue value);
  void unbind(const Var& v);
  const EvalValue* lookup(const VarNode* v) const;
  EvalValue eval(const PrimExpr& e);

 protected:
  // The value of buffer[indices] (each index has the access's lanes or 1). Default: error.
  virtual EvalValue load(const BufferLoadNode* op, const std::vector<EvalValue>& indices);

 private:
  std::unordered_map<const VarNode*, EvalValue> vars_;
};

// Helpers shared with the interpreter.
// v wrapped to integer dtype t's width (sign- or zero-extended into int64).
int64_t wrap_int(int64_t v, DataType t);
// v rounded to float dtype t's precision (float32, float16, bfloat16; float64 and non-floats
// unchanged).
double round_float(double v, DataType t);
// One lane of an intrinsic (also the constant folder's definition):
//   intrinsic_float: the float-result intrinsics (abs included) in double, not yet rounded;
//   intrinsic_test:  isnan / isinf / isfinite;
//   intrinsic_int:   abs and the bitwise intrinsics on lanes of integer dtype t (element type),
//                    the result wrapped to t.
double intrinsic_float(CallOp op, const std::vector<double>& x);
bool intrinsic_test(CallOp op, double x);
int64_t intrinsic_int(CallOp op, const std::vector<int64_t>& x, DataType t);

}  // namespace anvil::ir
