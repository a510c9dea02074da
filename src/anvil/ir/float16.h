// IEEE binary16 (float16) and bfloat16 conversions on the host, used by the reference evaluator,
// the TIR interpreter and constant folding so that all three round the same way.
//
//  - Decoding (bits -> double) is exact: every float16/bfloat16 value is a double.
//  - Encoding (double -> bits) rounds once, directly from the double, to nearest with ties to
//    even; subnormals are produced (gradual underflow), values at or beyond the largest finite
//    value plus half an ulp become +-inf, +-0 keep their sign.
//  - NaN stays NaN with its sign; the payload's top bits are kept and the quiet bit is set (a
//    signalling NaN comes back quiet, like F16C's vcvtps2ph and LLVM's fptrunc).
#pragma once

#include <cstdint>

namespace anvil::ir {

// float16: 1 sign, 5 exponent (bias 15), 10 fraction bits; max 65504, min subnormal 2^-24.
uint16_t double_to_half_bits(double v);
double half_bits_to_double(uint16_t h);
// bfloat16: the top half of a float32: 1 sign, 8 exponent (bias 127), 7 fraction bits.
uint16_t double_to_bfloat16_bits(double v);
double bfloat16_bits_to_double(uint16_t h);

// v rounded to the nearest float16 / bfloat16 value, as a double.
inline double round_to_half(double v) { return half_bits_to_double(double_to_half_bits(v)); }
inline double round_to_bfloat16(double v) { return bfloat16_bits_to_double(double_to_bfloat16_bits(v)); }

}  // namespace anvil::ir
