// The bit layouts of the low-precision float types (bfloat16, float8_*, float4_e2m1fn): one table
// that the LLVM code generator's conversions and their tests read. A value is
// sign | exponent (exp_bits, biased by bias) | mantissa (man_bits); exponent 0 is subnormal.
// What the top of the range holds differs:
//   kIeee           all-ones exponent: inf (mantissa 0) or NaN (bfloat16, float8_e5m2)
//   kAllOnesNan     no inf; only S.1111.111 is NaN, the rest of that exponent is finite (e4m3fn)
//   kNegZeroNan     no inf, no -0: the one NaN is the -0 pattern 0x80 (the "fnuz" types)
//   kFinite         no inf, no NaN (float4_e2m1fn)
//   kExponentOnly   no sign bit, no mantissa, no zero: code c is 2^(c - bias), even c = 0 (no
//                   subnormals); all ones is the NaN (float8_e8m0fnu)
// Conversions from float32 round to nearest even. An overflow (or inf) gives inf for kIeee, NaN
// for kAllOnesNan / kNegZeroNan, the largest finite value for kFinite, as ml_dtypes (and so
// ONNX's reference) does; ONNX's Cast(saturate=1) clamps before converting. kExponentOnly rounds
// as ml_dtypes does too: to the nearer power of two, a tie (1.5 * 2^e) up; below the smallest
// value to the smallest; zero, negatives, inf, NaN and overflow to NaN (ONNX's round_mode and
// saturate are the importer's: convert_elementwise.cc).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "anvil/runtime/data_type.h"

namespace anvil::ir {

struct MinifloatFormat {
  enum Top { kIeee, kAllOnesNan, kNegZeroNan, kFinite, kExponentOnly };
  int exp_bits;
  int man_bits;
  int bias;
  Top top;
  int bits() const { return (top == kExponentOnly ? 0 : 1) + exp_bits + man_bits; }
  // The magnitude code (sign bit clear) of the largest finite value.
  int max_finite_code() const {
    int all = (1 << (exp_bits + man_bits)) - 1;
    switch (top) {
      case kIeee: return (((1 << exp_bits) - 1) << man_bits) - 1;
      case kAllOnesNan: return all - 1;
      case kExponentOnly: return (1 << exp_bits) - 2;
      default: return all;
    }
  }
  // The value of a bit pattern on the host (import-time constants; the generated code converts
  // with integer operations, codegen_llvm_lowp.cc).
  double decode(uint32_t code) const {
    if (top == kExponentOnly) return code == (1u << exp_bits) - 1 ? std::nan("") : std::ldexp(1.0, static_cast<int>(code) - bias);
    const int n = bits();
    const bool neg = (code >> (n - 1)) & 1;
    const uint32_t mag = code & ((1u << (n - 1)) - 1);
    const int exp = static_cast<int>(mag >> man_bits);
    const uint32_t man = mag & ((1u << man_bits) - 1);
    const bool nan = (top == kIeee && exp == (1 << exp_bits) - 1 && man != 0) ||
                     (top == kAllOnesNan && mag == (1u << (n - 1)) - 1) || (top == kNegZeroNan && neg && mag == 0);
    if (nan) return std::nan("");
    double v = top == kIeee && exp == (1 << exp_bits) - 1 ? HUGE_VAL
               : exp == 0                                ? std::ldexp(man, 1 - bias - man_bits)
                                                         : std::ldexp(1.0 + std::ldexp(man, -man_bits), exp - bias);
    return neg ? -v : v;
  }
  // The largest finite value (448 for float8_e4m3fn, 57344 for float8_e5m2, 6 for float4).
  double max_finite() const { return decode(static_cast<uint32_t>(max_finite_code())); }
  // v rounded to this format on the host (constant folding), as the generated code rounds:
  // through float32, then to nearest with ties to the even code; an overflow is inf (kIeee), NaN
  // or the largest value (kFinite); NaN is NaN (kFinite: 0). A linear search: 8 bits at most.
  double round(double v) const {
    v = static_cast<float>(v);
    if (top == kExponentOnly) return round_exponent_only(v);
    if (std::isnan(v)) return top == kFinite ? 0.0 : v;
    const uint32_t max_code = static_cast<uint32_t>(max_finite_code());
    const double a = std::fabs(v), max = decode(max_code);
    // The step above max (max + one ulp) rounds to overflow; ties go to the even code.
    const double beyond = max + std::ldexp(1.0, static_cast<int>(max_code >> man_bits) - bias - man_bits);
    uint32_t best = 0;
    double best_diff = HUGE_VAL;
    for (uint32_t c = 0; c <= max_code + 1; ++c) {
      double d = std::fabs(a - (c <= max_code ? decode(c) : beyond));
      if (d < best_diff || (d == best_diff && c % 2 == 0)) best = c, best_diff = d;
    }
    double r;
    if (best <= max_code) r = decode(best);
    else r = top == kIeee ? HUGE_VAL : top == kFinite ? max : std::nan("");
    if (top == kNegZeroNan && r == 0) return 0.0;  // no -0
    return std::signbit(v) ? -r : r;
  }

 private:
  // kExponentOnly: 2^e <= v < 2^(e+1) becomes 2^e below 1.5 * 2^e, else 2^(e+1).
  double round_exponent_only(double v) const {
    if (!(v > 0) || std::isinf(v)) return std::nan("");  // NaN, zero, negatives, inf
    int e = 0;
    const double m = std::frexp(v, &e);  // v = m * 2^e, 0.5 <= m < 1
    const int code = std::max(0, e - 1 + bias + (m >= 0.75 ? 1 : 0));
    return code > max_finite_code() ? std::nan("") : decode(static_cast<uint32_t>(code));
  }
};

inline std::optional<MinifloatFormat> minifloat_format(DataType t) {
  if (t.bits() == 16 && t.code() == DataType::kBFloat) return MinifloatFormat{8, 7, 127, MinifloatFormat::kIeee};
  if (t.bits() == 8) {
    switch (t.code()) {
      case DataType::kFloat8E4M3FN: return MinifloatFormat{4, 3, 7, MinifloatFormat::kAllOnesNan};
      case DataType::kFloat8E4M3FNUZ: return MinifloatFormat{4, 3, 8, MinifloatFormat::kNegZeroNan};
      case DataType::kFloat8E5M2: return MinifloatFormat{5, 2, 15, MinifloatFormat::kIeee};
      case DataType::kFloat8E5M2FNUZ: return MinifloatFormat{5, 2, 16, MinifloatFormat::kNegZeroNan};
      case DataType::kFloat8E8M0FNU: return MinifloatFormat{8, 0, 127, MinifloatFormat::kExponentOnly};
      default: break;
    }
  }
  if (t.bits() == 4 && t.code() == DataType::kFloat4E2M1FN) return MinifloatFormat{2, 1, 1, MinifloatFormat::kFinite};
  return std::nullopt;
}

}  // namespace anvil::ir
