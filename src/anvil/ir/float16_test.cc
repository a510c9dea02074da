// float16/bfloat16 conversions: exhaustive round trips of every 16-bit pattern, and double/float
// -> 16-bit rounding against references computed differently: a bisection over the sorted
// finite values (nearest, ties to the even pattern), the F16C instruction (x86 hosts that have
// it) and the float32 -> bfloat16 integer rounding trick. Inputs: every value, every midpoint
// between neighbours and their nearest doubles/floats on both sides, and millions of random
// doubles and floats (fixed seed).
#include "anvil/ir/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define ANVIL_TEST_F16C 1
#endif

namespace anvil::ir {
namespace {

constexpr uint32_t kSeed = 20260611;

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}
float float_of(uint32_t b) {
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}
double double_of(uint64_t b) {
  double v;
  std::memcpy(&v, &b, 8);
  return v;
}

// One 16-bit format as the references see it: its decoder, the largest finite pattern, and
// the encoder under test.
struct Fmt {
  const char* name;
  double (*decode)(uint16_t);
  uint16_t (*encode)(double);
  uint16_t max_finite;  // positive patterns 0..max_finite are the finite values, increasing
  uint16_t inf;
};
const Fmt kHalf{"float16", half_bits_to_double, double_to_half_bits, 0x7bff, 0x7c00};
const Fmt kBFloat{"bfloat16", bfloat16_bits_to_double, double_to_bfloat16_bits, 0x7f7f, 0x7f80};

// Reference rounding of a finite or infinite x: bisection for the neighbours lo <= |x| < hi,
// then 2|x| against lo + hi (both sums exact in double), ties to the even pattern. The value
// after the largest finite one is taken as max + ulp(max) (a power of two), so |x| at or past
// the midpoint overflows to inf.
uint16_t reference_encode(const Fmt& f, double x) {
  uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  double a = std::fabs(x);
  if (std::isinf(a)) return sign | f.inf;
  uint32_t lo = 0, hi = f.max_finite;  // invariant: decode(lo) <= a; answer in [lo, hi]
  if (f.decode(f.max_finite) <= a) {
    lo = f.max_finite;
  } else {
    while (lo < hi) {
      uint32_t mid = (lo + hi + 1) / 2;
      if (f.decode(static_cast<uint16_t>(mid)) <= a)
        lo = mid;
      else
        hi = mid - 1;
    }
  }
  double v_lo = f.decode(static_cast<uint16_t>(lo));
  double v_hi = lo == f.max_finite ? 2 * f.decode(static_cast<uint16_t>(lo)) - f.decode(static_cast<uint16_t>(lo - 1))
                                   : f.decode(static_cast<uint16_t>(lo + 1));
  if (a == v_lo) return static_cast<uint16_t>(sign | lo);
  double two_a = 2 * a, mid = v_lo + v_hi;
  uint32_t pick = two_a < mid ? lo : two_a > mid ? lo + 1 : (lo % 2 == 0 ? lo : lo + 1);
  if (pick > f.max_finite) return sign | f.inf;
  return static_cast<uint16_t>(sign | pick);
}

bool is_nan_pattern(const Fmt& f, uint16_t h) { return (h & f.inf) == f.inf && (h & ~f.inf & 0x7fff) != 0; }

void round_trip_all(const Fmt& f) {
  int nans = 0;
  for (uint32_t b = 0; b < 65536; ++b) {
    auto h = static_cast<uint16_t>(b);
    double d = f.decode(h);
    uint16_t back = f.encode(d);
    if (is_nan_pattern(f, h)) {
      ++nans;
      ASSERT_TRUE(std::isnan(d)) << f.name << " " << std::hex << b;
      // Canonicalised only by setting the quiet bit; sign and payload survive.
      uint16_t quiet = f.inf == 0x7c00 ? 0x0200 : 0x0040;  // the top fraction bit
      ASSERT_EQ(back, h | quiet) << f.name << " " << std::hex << b;
    } else {
      ASSERT_EQ(back, h) << f.name << " " << std::hex << b << " -> " << d;
      ASSERT_EQ(std::signbit(d), (h & 0x8000) != 0);
      // Float32 holds every value too: the float path round-trips as well.
      ASSERT_EQ(f.encode(static_cast<float>(d)), h) << f.name << " " << std::hex << b;
    }
  }
  EXPECT_EQ(nans, 2 * (f.inf == 0x7c00 ? 1023 : 127));
}

TEST(Float16, EveryHalfPatternRoundTrips) { round_trip_all(kHalf); }
TEST(Float16, EveryBFloat16PatternRoundTrips) { round_trip_all(kBFloat); }

TEST(Float16, KnownValues) {
  EXPECT_EQ(double_to_half_bits(1.0), 0x3c00);
  EXPECT_EQ(double_to_half_bits(-2.0), 0xc000);
  EXPECT_EQ(double_to_half_bits(65504.0), 0x7bff);
  EXPECT_EQ(double_to_half_bits(65519.99), 0x7bff);
  EXPECT_EQ(double_to_half_bits(65520.0), 0x7c00);  // halfway to 2^16: ties away from the odd max
  EXPECT_EQ(double_to_half_bits(1e300), 0x7c00);
  EXPECT_EQ(double_to_half_bits(-1e300), 0xfc00);
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.0, -24)), 0x0001);      // smallest subnormal
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.0, -25)), 0x0000);      // halfway to it: even (0)
  EXPECT_EQ(double_to_half_bits(std::ldexp(1.5, -25)), 0x0001);      // past halfway
  EXPECT_EQ(double_to_half_bits(std::ldexp(3.0, -25)), 0x0002);      // 1.5 subnormal ulps: even (2)
  EXPECT_EQ(double_to_half_bits(-std::ldexp(1.0, -26)), 0x8000);     // -0
  EXPECT_EQ(double_to_half_bits(std::ldexp(1023.5, -24)), 0x0400);   // rounds up into the normals
  EXPECT_EQ(double_to_half_bits(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(double_to_half_bits(2049.0), 0x6800);                    // 2048: tie to even
  EXPECT_EQ(double_to_half_bits(2051.0), 0x6802);                    // 2052: tie to even
  EXPECT_EQ(double_to_half_bits(0.1), 0x2e66);
  EXPECT_TRUE(std::isnan(round_to_half(NAN)));
  EXPECT_EQ(double_to_half_bits(-std::numeric_limits<double>::quiet_NaN()) & 0x8000, 0x8000);
  EXPECT_EQ(half_bits_to_double(0x3555), 0.333251953125);
  EXPECT_EQ(half_bits_to_double(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(double_to_bfloat16_bits(1.0), 0x3f80);
  EXPECT_EQ(double_to_bfloat16_bits(257.0), 0x4380);  // 256: tie to even
  EXPECT_EQ(double_to_bfloat16_bits(259.0), 0x4382);  // 260
  EXPECT_EQ(double_to_bfloat16_bits(3.4e38), 0x7f80);
  EXPECT_EQ(double_to_bfloat16_bits(std::ldexp(1.0, -133)), 0x0001);
  EXPECT_EQ(double_to_bfloat16_bits(std::ldexp(1.0, -134)), 0x0000);
}

// Every midpoint between neighbouring values (and past the largest), and the doubles and floats
// right next to each value and midpoint, both signs.
std::vector<double> near_halfway_inputs(const Fmt& f) {
  std::vector<double> xs;
  auto add = [&](double x) {
    for (double s : {1.0, -1.0}) {
      double y = s * x;
      xs.push_back(y);
      xs.push_back(std::nextafter(y, INFINITY));
      xs.push_back(std::nextafter(y, -INFINITY));
      float fy = static_cast<float>(y);
      xs.push_back(std::nextafter(fy, INFINITY));
      xs.push_back(std::nextafter(fy, -INFINITY));
    }
  };
  for (uint32_t b = 0; b <= f.max_finite; ++b) {
    double v = f.decode(static_cast<uint16_t>(b));
    double next = b == f.max_finite ? 2 * v - f.decode(static_cast<uint16_t>(b - 1)) : f.decode(static_cast<uint16_t>(b + 1));
    add(v);
    add((v + next) / 2);  // exact in double
  }
  return xs;
}

void check_against_reference(const Fmt& f, const std::vector<double>& xs) {
  size_t bad = 0;
  for (double x : xs) {
    uint16_t got = f.encode(x), want = reference_encode(f, x);
    if (got != want && ++bad <= 10)
      ADD_FAILURE() << f.name << ": " << std::hexfloat << x << " -> " << std::hex << got << ", want " << want;
  }
  EXPECT_EQ(bad, 0u) << f.name << ": " << bad << " of " << xs.size();
}

// Random doubles: full-width random fractions with exponents spanning the format's range
// (subnormals, normals, overflow), plus completely random bit patterns (finite ones).
std::vector<double> random_doubles(std::mt19937_64& rng, int emin, int emax, size_t n) {
  std::vector<double> xs;
  std::uniform_int_distribution<int> exp(emin, emax);
  for (size_t i = 0; i < n; ++i) {
    uint64_t b = rng();
    if (i % 8 == 7) {
      double d = double_of(b);
      if (!std::isnan(d)) xs.push_back(d);
      continue;
    }
    uint64_t e = static_cast<uint64_t>(exp(rng) + 1023);
    xs.push_back(double_of((b & 0x800fffffffffffffull) | (e << 52)));
  }
  return xs;
}

TEST(Float16, HalfRoundingMatchesBisectionReference) {
  std::printf("float16 seed %u\n", kSeed);
  check_against_reference(kHalf, near_halfway_inputs(kHalf));
  std::mt19937_64 rng(kSeed);
  check_against_reference(kHalf, random_doubles(rng, -28, 17, 2'000'000));
}

TEST(Float16, BFloat16RoundingMatchesBisectionReference) {
  check_against_reference(kBFloat, near_halfway_inputs(kBFloat));
  std::mt19937_64 rng(kSeed + 1);
  check_against_reference(kBFloat, random_doubles(rng, -136, 129, 1'000'000));
}

// float32 -> bfloat16 the integer way (round to nearest even on the bit pattern; NaN quieted).
uint16_t bfloat16_by_bits(float x) {
  uint32_t u = bits_of(x);
  if (std::isnan(x)) return static_cast<uint16_t>((u >> 16) | 0x40);
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// Random float bit patterns (every class: NaN, inf, subnormal) and floats near each halfway point.
std::vector<float> random_and_halfway_floats(const Fmt& f, std::mt19937& rng, size_t n) {
  std::vector<float> xs;
  for (size_t i = 0; i < n; ++i) xs.push_back(float_of(static_cast<uint32_t>(rng())));
  for (double d : near_halfway_inputs(f)) {
    float x = static_cast<float>(d);
    xs.push_back(x);
    xs.push_back(std::nextafter(x, INFINITY));
    xs.push_back(std::nextafter(x, -INFINITY));
  }
  // Random fractions within the format's range: the 13/16 dropped bits random.
  std::uniform_real_distribution<float> u(-1, 1);
  std::uniform_int_distribution<int> e(f.inf == 0x7c00 ? -26 : -134, f.inf == 0x7c00 ? 17 : 129);
  for (size_t i = 0; i < n; ++i) xs.push_back(std::ldexp(u(rng), e(rng)));
  return xs;
}

TEST(Float16, BFloat16RoundingMatchesIntegerTrickOnFloats) {
  std::mt19937 rng(kSeed + 2);
  size_t bad = 0, count = 0;
  for (float x : random_and_halfway_floats(kBFloat, rng, 2'000'000)) {
    ++count;
    uint16_t got = double_to_bfloat16_bits(x), want = bfloat16_by_bits(x);
    if (got != want && ++bad <= 10) ADD_FAILURE() << std::hexfloat << x << " -> " << std::hex << got << ", want " << want;
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << count;
}

#ifdef ANVIL_TEST_F16C
// CPUID leaf 1, ECX bit 29 (clang 14's __builtin_cpu_supports does not know "f16c").
bool host_has_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
}

__attribute__((target("f16c"))) uint16_t f16c_encode(float x) {
  return static_cast<uint16_t>(_cvtss_sh(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}
__attribute__((target("f16c"))) float f16c_decode(uint16_t h) { return _cvtsh_ss(h); }
#endif

TEST(Float16, HalfRoundingMatchesF16C) {
#ifdef ANVIL_TEST_F16C
  if (!host_has_f16c()) GTEST_SKIP() << "host has no F16C";
  for (uint32_t b = 0; b < 65536; ++b) {
    auto h = static_cast<uint16_t>(b);
    float hw = f16c_decode(h);
    double ours = half_bits_to_double(h);
    if (std::isnan(ours)) {
      ASSERT_TRUE(std::isnan(hw));
      ASSERT_EQ(double_to_half_bits(ours), f16c_encode(hw)) << std::hex << b;  // same quieting
    } else {
      ASSERT_EQ(static_cast<double>(hw), ours) << std::hex << b;
    }
  }
  std::mt19937 rng(kSeed + 3);
  size_t bad = 0, count = 0;
  for (float x : random_and_halfway_floats(kHalf, rng, 3'000'000)) {
    ++count;
    uint16_t got = double_to_half_bits(x), want = f16c_encode(x);
    if (got != want && ++bad <= 10) ADD_FAILURE() << std::hexfloat << x << " -> " << std::hex << got << ", want " << want;
  }
  EXPECT_EQ(bad, 0u) << bad << " of " << count;
#else
  GTEST_SKIP() << "not an x86 host";
#endif
}

}  // namespace
}  // namespace anvil::ir
