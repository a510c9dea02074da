// floor_div / floor_mod / ceil_div against the definition (the largest q with q * b <= a, exact in
// 128-bit arithmetic) over a grid of small and extreme operands, and the int64 wrap-around rule.
#include "anvil/base/int_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

namespace anvil {
namespace {

__extension__ using i128 = __int128;

// The floor quotient by its definition: q * b <= a < (q + 1) * b for b > 0 (mirrored for b < 0).
i128 floor_by_definition(i128 a, i128 b) {
  i128 q = a / b;  // truncated: off by at most one
  for (i128 c : {q - 1, q, q + 1})
    if (b > 0 ? (c * b <= a && a < (c + 1) * b) : (c * b >= a && a > (c + 1) * b)) return c;
  ADD_FAILURE() << "no floor quotient";
  return 0;
}

TEST(IntMath, ExamplesFromTheHeader) {
  static_assert(floor_div<int64_t>(-7, 2) == -4 && floor_mod<int64_t>(-7, 2) == 1);
  static_assert(floor_mod<int64_t>(7, -2) == -1 && ceil_div<int64_t>(7, 2) == 4 && ceil_div<int64_t>(-7, 2) == -3);
  EXPECT_EQ(floordiv_i64(-1, 3), -1);
  EXPECT_EQ(floormod_i64(-1, 3), 2);
}

TEST(IntMath, MatchesTheDefinitionOnAGridOfSignsAndExtremes) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min(), kMax = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> values = {kMin, kMin + 1, kMax, kMax - 1, -1000003, 1000003};
  for (int64_t v = -12; v <= 12; ++v) values.push_back(v);
  int checked = 0;
  for (int64_t a : values) {
    for (int64_t b : values) {
      if (b == 0) continue;
      if (a == kMin && b == -1) continue;  // the wrap-around case, below
      i128 q = floor_by_definition(a, b);
      ASSERT_EQ(floor_div(a, b), static_cast<int64_t>(q)) << a << " // " << b;
      ASSERT_EQ(floordiv_i64(a, b), static_cast<int64_t>(q)) << a << " // " << b;
      ASSERT_EQ(floor_mod(a, b), static_cast<int64_t>(i128{a} - q * b)) << a << " % " << b;
      ASSERT_EQ(floormod_i64(a, b), floor_mod(a, b)) << a << " % " << b;
      i128 c = -floor_by_definition(-i128{a}, b);  // ceil(a / b) = -floor(-a / b)
      if (c >= kMin && c <= kMax) {
        ASSERT_EQ(ceil_div(a, b), static_cast<int64_t>(c)) << a << " ceildiv " << b;
      }
      ASSERT_EQ(floor_div<i128>(a, b), q);  // the 128-bit instance (arith/modular.cc) agrees
      ++checked;
    }
  }
  EXPECT_GT(checked, 900);
}

TEST(IntMath, Int64MinDividedByMinusOneWraps) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(floordiv_i64(kMin, -1), kMin);
  EXPECT_EQ(floormod_i64(kMin, -1), 0);
  EXPECT_EQ(floordiv_i64(5, -1), -5);
  EXPECT_EQ(floormod_i64(5, -1), 0);
}

}  // namespace
}  // namespace anvil
