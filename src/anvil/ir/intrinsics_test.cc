// The intrinsics of intrinsics.def at the IR level: names, dtype rules of the factory, the
// printer, and the reference evaluator against <cmath> (float32, float64, float16; random inputs
// from a fixed, printed seed; special values for the classifications) and against hand-written
// integer semantics for the bitwise ops and shifts. The code generators are checked against the
// same references in codegen/codegen_intrinsics_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <random>

#include "anvil/base/error.h"
#include "anvil/ir/eval.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/float16.h"
#include "anvil/ir/intrinsic_references.h"
#include "anvil/ir/printer.h"

namespace anvil::ir {
namespace {

using reference::int_ref;
using reference::kFloatCases;
using reference::FloatCase;

constexpr uint32_t kSeed = 20261202;

std::string error_of(const std::function<void()>& fn, ErrorKind* kind) {
  try {
    fn();
  } catch (const Error& e) {
    *kind = e.kind();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(Intrinsics, NamesRoundTripAndPrint) {
  for (const char* name : {"sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh",
                           "log2", "log10", "trunc", "copysign", "isnan", "isinf", "isfinite", "bitwise_and",
                           "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right"}) {
    auto op = parse_call_op(name);
    ASSERT_TRUE(op.has_value()) << name;
    EXPECT_EQ(call_op_name(*op), name);
  }
  EXPECT_FALSE(parse_call_op("nearbyint").has_value());  // round is already half to even
  Var x("x", DataType::float32()), i("i");
  EXPECT_EQ(to_string(sin(x) + log10(x)), "sin(x) + log10(x)");
  EXPECT_EQ(to_string(shift_right(i, 3)), "shift_right(i, 3)");
  EXPECT_EQ(to_string(isnan(x)), "isnan(x)");
}

TEST(Intrinsics, DtypeRulesOfTheFactory) {
  Var x("x", DataType::float32()), d("d", DataType::float64()), i("i"), u("u", DataType::uint8());
  Var b("b", bool_type()), v("v", DataType(DataType::kFloat, 32, 8));
  EXPECT_EQ(sin(x).dtype(), DataType::float32());
  EXPECT_EQ(copysign(d, 1).dtype(), DataType::float64());  // the literal takes d's dtype
  EXPECT_EQ(isnan(x).dtype(), bool_type());
  EXPECT_EQ(isinf(v).dtype(), bool_type(8));  // lanes of the argument
  EXPECT_EQ(bitwise_and(u, 3).dtype(), DataType::uint8());
  EXPECT_EQ(shift_left(i, 2).dtype(), DataType::int32());
  ErrorKind kind{};
  // Float-only intrinsics name themselves and the integer dtype.
  EXPECT_EQ(error_of([&] { (void)sin(i); }, &kind), "Call sin: arguments must be float, got int32");
  EXPECT_EQ(kind, ErrorKind::kType);
  EXPECT_EQ(error_of([&] { (void)isnan(u); }, &kind), "Call isnan: arguments must be float, got uint8");
  EXPECT_EQ(error_of([&] { (void)atanh(b); }, &kind), "Call atanh: arguments must be float, got bool");
  // Bitwise ones refuse floats and bools (bools have And/Or/Not).
  EXPECT_EQ(error_of([&] { (void)bitwise_xor(x, x); }, &kind), "Call bitwise_xor: arguments must be int or uint, got float32");
  EXPECT_EQ(kind, ErrorKind::kType);
  EXPECT_EQ(error_of([&] { (void)bitwise_not(b); }, &kind), "Call bitwise_not: arguments must be int or uint, got bool");
  EXPECT_EQ(error_of([&] { (void)shift_left(i, u); }, &kind), "shift_left: incompatible operand dtypes int32 and uint8");
  EXPECT_EQ(error_of([&] { CallNode::make(CallOp::k_copysign, {x}); }, &kind), "Call copysign: expected 2 arguments, got 1");
  EXPECT_EQ(kind, ErrorKind::kValue);
}

// Each float intrinsic in float64 and float32 (and float16) on random inputs: the evaluator is
// <cmath> in double, rounded once to the dtype.
TEST(Intrinsics, EvaluatorMatchesCmathOnRandomInputs) {
  std::printf("intrinsics seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  for (DataType t : {DataType::float64(), DataType::float32(), DataType::float16()}) {
    Var x("x", t);
    for (const FloatCase& c : kFloatCases) {
      PrimExpr e = call(c.op, {x});
      std::uniform_real_distribution<double> dist(c.lo, c.hi);
      for (int k = 0; k < 200; ++k) {
        double in = round_float(dist(rng), t);
        double want = round_float(c.ref(in), t);
        double got = eval_float(e, {{x, in}});
        ASSERT_EQ(got, want) << call_op_name(c.op) << "(" << in << ") in " << dtype_name(t);
      }
    }
    Var y("y", t);
    std::uniform_real_distribution<double> dist(-5, 5);
    for (int k = 0; k < 100; ++k) {
      double a = round_float(dist(rng), t), s = round_float(dist(rng), t);
      EXPECT_EQ(eval_float(copysign(x, y), {{x, a}, {y, s}}), std::copysign(a, s)) << a << ", " << s;
    }
    EXPECT_TRUE(std::signbit(eval_float(copysign(x, y), {{x, 2.0}, {y, -0.0}})));
  }
  // Outside the domain: NaN, as <cmath>.
  Var x("x", DataType::float32());
  EXPECT_TRUE(std::isnan(eval_float(asin(x), {{x, 2.0}})));
  EXPECT_TRUE(std::isnan(eval_float(acosh(x), {{x, 0.5}})));
  EXPECT_EQ(eval_float(atanh(x), {{x, 1.0}}), std::numeric_limits<double>::infinity());
  EXPECT_EQ(eval_float(log2(x), {{x, 0.0}}), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(eval_float(trunc(x), {{x, -2.75}}), -2.0);
}

// round is half to even (ONNX Round, numpy); trunc toward zero.
TEST(Intrinsics, RoundIsHalfToEven) {
  Var x("x", DataType::float32());
  const double in[] = {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.4999, -3.5};
  const double even[] = {0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 2.0, -4.0};
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(eval_float(round(x), {{x, in[k]}}), even[k]) << in[k];
    EXPECT_EQ(eval_float(trunc(x), {{x, in[k]}}), std::trunc(in[k])) << in[k];
  }
}

TEST(Intrinsics, ClassificationOfSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const double values[] = {nan, -nan, inf, -inf, 0.0, -0.0, 1.0, -3.5, 1e-310, 65504.0, 1e300, 3.4e38};
  for (DataType t : {DataType::float64(), DataType::float32(), DataType::float16()}) {
    Var x("x", t);
    for (double raw : values) {
      double v = round_float(raw, t);  // 1e300 is inf in float32, 1e-310 0 in float16, ...
      EXPECT_EQ(eval_int(isnan(x), {{x, raw}}), static_cast<int64_t>(std::isnan(v))) << raw << " " << dtype_name(t);
      EXPECT_EQ(eval_int(isinf(x), {{x, raw}}), static_cast<int64_t>(std::isinf(v))) << raw << " " << dtype_name(t);
      EXPECT_EQ(eval_int(isfinite(x), {{x, raw}}), static_cast<int64_t>(std::isfinite(v))) << raw << " " << dtype_name(t);
    }
  }
  // Lane-wise on a vector.
  DataType v4(DataType::kFloat, 32, 4);
  Var xv("xv", v4);
  Evaluator ev;
  EvalValue in;
  in.dtype = v4;
  for (double f : {nan, inf, -1.0, -inf}) in.lanes.push_back({0, f});
  ev.bind(xv, in);
  EvalValue out = ev.eval(isinf(xv));
  EXPECT_EQ(out.dtype, bool_type(4));
  for (int l = 0; l < 4; ++l) EXPECT_EQ(out.as_int(l), static_cast<int64_t>(l == 1 || l == 3)) << l;
}

TEST(Intrinsics, BitwiseOpsAndShiftsOnEveryIntegerWidth) {
  std::mt19937_64 rng(kSeed + 1);
  for (int bits : {8, 16, 32, 64}) {
    for (DataType::Code code : {DataType::kInt, DataType::kUInt}) {
      DataType t(code, static_cast<uint8_t>(bits), 1);
      Var a("a", t), b("b", t);
      for (CallOp op : reference::kBitwiseOps) {
        PrimExpr e = call_op_arity(op) == 1 ? call(op, {a}) : call(op, {a, b});
        for (int k = 0; k < 300; ++k) {
          int64_t x = wrap_int(static_cast<int64_t>(rng()), t);
          if (k % 3 == 0) x = wrap_int(static_cast<int64_t>(rng() % 7) - 3, t);  // small, some negative
          // Shift amounts: in range, at and past the width, negative (huge as unsigned).
          int64_t y = wrap_int(static_cast<int64_t>(rng()), t);
          if (op == CallOp::k_shift_left || op == CallOp::k_shift_right) {
            y = wrap_int(reference::shift_amount(bits, static_cast<uint64_t>(k), rng()), t);
          }
          int64_t want = int_ref(op, x, y, t);
          ASSERT_EQ(eval_int(e, {{a, x}, {b, y}}), want)
              << call_op_name(op) << "(" << x << ", " << y << ") in " << dtype_name(t);
        }
      }
    }
  }
  Var c("c", DataType::int8());
  EXPECT_EQ(eval_int(shift_left(c, 7), {{c, int64_t{1}}}), -128);  // wraps into the sign bit
  EXPECT_EQ(eval_int(shift_right(c, 9), {{c, int64_t{-100}}}), -1);
  EXPECT_EQ(eval_int(bitwise_not(c), {{c, int64_t{0}}}), -1);
}

}  // namespace
}  // namespace anvil::ir
