// Test support: the reference semantics of the intrinsics of intrinsics.def, written out
// independently of eval.cc, shared by the IR tests (intrinsics_test.cc) and the code-generator
// tests (codegen/codegen_intrinsics_test.cc) so both check against the same facts.
#pragma once

#include <cmath>
#include <cstdint>

#include "anvil/ir/expr.h"

namespace anvil::ir::reference {

// A float intrinsic, its <cmath> reference and an input range inside its domain.
struct FloatCase {
  CallOp op;
  double (*ref)(double);
  double lo, hi;
};

inline const FloatCase kFloatCases[] = {
    {CallOp::k_sin, [](double x) { return std::sin(x); }, -20, 20},
    {CallOp::k_cos, [](double x) { return std::cos(x); }, -20, 20},
    {CallOp::k_tan, [](double x) { return std::tan(x); }, -1.5, 1.5},
    {CallOp::k_asin, [](double x) { return std::asin(x); }, -1, 1},
    {CallOp::k_acos, [](double x) { return std::acos(x); }, -1, 1},
    {CallOp::k_atan, [](double x) { return std::atan(x); }, -50, 50},
    {CallOp::k_sinh, [](double x) { return std::sinh(x); }, -10, 10},
    {CallOp::k_cosh, [](double x) { return std::cosh(x); }, -10, 10},
    {CallOp::k_asinh, [](double x) { return std::asinh(x); }, -50, 50},
    {CallOp::k_acosh, [](double x) { return std::acosh(x); }, 1, 50},
    {CallOp::k_atanh, [](double x) { return std::atanh(x); }, -0.999, 0.999},
    {CallOp::k_log2, [](double x) { return std::log2(x); }, 1e-3, 1e3},
    {CallOp::k_log10, [](double x) { return std::log10(x); }, 1e-3, 1e3},
    {CallOp::k_trunc, [](double x) { return std::trunc(x); }, -100, 100},
};

inline constexpr CallOp kBitwiseOps[] = {CallOp::k_bitwise_and, CallOp::k_bitwise_or,  CallOp::k_bitwise_xor,
                                         CallOp::k_bitwise_not, CallOp::k_shift_left, CallOp::k_shift_right};

// Shift amounts worth testing for a `bits`-wide type: in range, at and past the width, negative
// (huge as unsigned); `pick` chooses one (random in range for the last).
inline int64_t shift_amount(int bits, uint64_t pick, uint64_t random) {
  const int64_t amounts[] = {0, 1, bits - 1, bits, bits + 3, -1, static_cast<int64_t>(random % static_cast<uint64_t>(bits))};
  return amounts[pick % 7];
}

// The integer op of dtype t on values held as int64 (int sign-, uint zero-extended).
inline int64_t int_ref(CallOp op, int64_t a, int64_t b, DataType t) {
  int bits = t.bits();
  auto wrap = [&](uint64_t v) -> int64_t {
    if (bits == 64) return static_cast<int64_t>(v);
    v &= (uint64_t{1} << bits) - 1;
    if (t.is_int() && (v >> (bits - 1))) v |= ~((uint64_t{1} << bits) - 1);
    return static_cast<int64_t>(v);
  };
  bool wide = static_cast<uint64_t>(b) >= static_cast<uint64_t>(bits);
  switch (op) {
    case CallOp::k_bitwise_and: return wrap(static_cast<uint64_t>(a) & static_cast<uint64_t>(b));
    case CallOp::k_bitwise_or: return wrap(static_cast<uint64_t>(a) | static_cast<uint64_t>(b));
    case CallOp::k_bitwise_xor: return wrap(static_cast<uint64_t>(a) ^ static_cast<uint64_t>(b));
    case CallOp::k_bitwise_not: return wrap(~static_cast<uint64_t>(a));
    case CallOp::k_shift_left: return wide ? 0 : wrap(static_cast<uint64_t>(a) << b);
    case CallOp::k_shift_right:
      if (t.is_int()) return wide ? (a < 0 ? -1 : 0) : a >> b;
      return wide ? 0 : static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
    default: return 0;
  }
}

}  // namespace anvil::ir::reference
