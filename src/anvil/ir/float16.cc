// float16 / bfloat16 <-> double (semantics in float16.h). One bit-level encoder parameterised by
// the format's exponent and fraction widths.
#include "anvil/ir/float16.h"

#include <cmath>
#include <cstring>

namespace anvil::ir {
namespace {

// A 16-bit binary format with kExp exponent and kFrac fraction bits.
template <int kExp, int kFrac>
struct Format16 {
  static_assert(1 + kExp + kFrac == 16);
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr uint32_t kExpMask = ((1u << kExp) - 1) << kFrac;  // the all-ones exponent field

  static uint16_t encode(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    uint32_t sign = static_cast<uint32_t>(bits >> 63) << 15;
    int exp = static_cast<int>((bits >> 52) & 0x7ff);
    uint64_t frac = bits & ((uint64_t{1} << 52) - 1);
    if (exp == 0x7ff) {
      if (frac == 0) return static_cast<uint16_t>(sign | kExpMask);  // inf
      uint32_t payload = static_cast<uint32_t>(frac >> (52 - kFrac));
      return static_cast<uint16_t>(sign | kExpMask | (1u << (kFrac - 1)) | payload);  // quiet NaN
    }
    if (exp == 0) return static_cast<uint16_t>(sign);  // zero or double subnormal (< 2^-1022): rounds to 0
    // v = sig * 2^(e - 52), sig has 53 bits. The target's exponent field for it is e + kBias.
    uint64_t sig = frac | (uint64_t{1} << 52);
    int target_exp = exp - 1023 + kBias;
    // Low bits of sig to drop: normal results keep kFrac + 1 bits; subnormal ones fewer.
    int shift = 52 - kFrac + (target_exp >= 1 ? 0 : 1 - target_exp);
    if (shift > 53) return static_cast<uint16_t>(sign);  // below half the smallest subnormal
    uint64_t q = sig >> shift;
    uint64_t rem = sig & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;  // nearest, ties to even
    // Normal: the implicit bit in q adds one to the exponent field (a carry out of the fraction
    // moves to the next binade, the largest one to inf). Subnormal: q is the field (q == 2^kFrac
    // is the smallest normal).
    uint64_t field = target_exp >= 1 ? (static_cast<uint64_t>(target_exp - 1) << kFrac) + q : q;
    if (field >= kExpMask) return static_cast<uint16_t>(sign | kExpMask);  // overflow: inf
    return static_cast<uint16_t>(sign | field);
  }

  static double decode(uint16_t h) {
    bool neg = (h >> 15) != 0;
    uint32_t exp = (h & kExpMask) >> kFrac;
    uint32_t frac = h & ((1u << kFrac) - 1);
    double out;
    if (exp == (1u << kExp) - 1) {
      if (frac == 0) {
        out = INFINITY;
      } else {  // NaN: the payload moves to the double's top fraction bits
        uint64_t bits = (uint64_t{0x7ff} << 52) | (static_cast<uint64_t>(frac) << (52 - kFrac));
        std::memcpy(&out, &bits, 8);
      }
    } else if (exp == 0) {
      out = std::ldexp(static_cast<double>(frac), 1 - kBias - kFrac);
    } else {
      out = std::ldexp(static_cast<double>(frac | (1u << kFrac)), static_cast<int>(exp) - kBias - kFrac);
    }
    return neg ? -out : out;  // negation flips only the sign bit, NaN included
  }
};

using Half = Format16<5, 10>;
using BFloat = Format16<8, 7>;

}  // namespace

uint16_t double_to_half_bits(double v) { return Half::encode(v); }
double half_bits_to_double(uint16_t h) { return Half::decode(h); }
uint16_t double_to_bfloat16_bits(double v) { return BFloat::encode(v); }
double bfloat16_bits_to_double(uint16_t h) { return BFloat::decode(h); }

}  // namespace anvil::ir
