// Integer division rounding toward minus infinity (Python's // and %, the IR's floordiv and
// floormod, TVM's semantics): the one definition that the evaluator (ir/eval), constant folding
// and bounds (arith/), bound inference (te/), the VM's shape arithmetic and the tests of the code
// generators use. Generated code cannot call it (the C back end's prelude and the LLVM lowering
// spell it out); codegen_conformance_test.cc checks both against these functions.
//
//   floor_div(-7, 2) == -4    floor_mod(-7, 2) == 1    floor_mod(7, -2) == -1    ceil_div(7, 2) == 4
#pragma once

#include <cstdint>

namespace anvil {

// For any signed integer type T (int64_t, __int128): b != 0 and a / b representable in T (not
// T's minimum divided by -1). The remainder takes the divisor's sign.
template <typename T>
constexpr T floor_div(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
template <typename T>
constexpr T floor_mod(T a, T b) {
  T r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}
template <typename T>
constexpr T ceil_div(T a, T b) {
  T q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

// int64 with the IR's wrap-around: b != 0; INT64_MIN // -1 wraps to INT64_MIN, INT64_MIN % -1 is 0
// (how constant folding and the evaluator treat the one quotient int64 cannot hold).
constexpr int64_t floordiv_i64(int64_t a, int64_t b) {
  return b == -1 ? static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(a)) : floor_div(a, b);
}
constexpr int64_t floormod_i64(int64_t a, int64_t b) { return b == -1 ? 0 : floor_mod(a, b); }

}  // namespace anvil
