// The code generator's low-precision conversions (codegen_llvm_lowp.cc) against a naive reference
// built from the format definitions: decoding every bit pattern by the formula, encoding by
// searching the sorted list of values for the nearest one (ties to the even code; for
// float8_e8m0fnu, powers of two alone, up as ml_dtypes rounds them), over special
// values, every value, every midpoint and random floats; one vectorised and one scalar kernel.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "anvil/codegen/llvm/codegen_llvm.h"
#include "anvil/ir/expr_ops.h"
#include "anvil/ir/minifloat.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {
namespace {

using ir::MinifloatFormat;

const DataType kTypes[] = {DataType::bfloat16(),    DataType::float8_e4m3fn(),   DataType::float8_e4m3fnuz(),
                           DataType::float8_e5m2(), DataType::float8_e5m2fnuz(), DataType::float8_e8m0fnu(),
                           DataType::float4_e2m1fn()};

// The value of a code from the definition (NaN for the NaN patterns).
double decode_ref(const MinifloatFormat& f, uint32_t code) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.top == MinifloatFormat::kExponentOnly) return code == 255 ? nan : std::pow(2.0, double(code) - f.bias);
  const int n = f.bits();
  bool neg = (code >> (n - 1)) & 1;
  uint32_t mag = code & ((1u << (n - 1)) - 1);
  int exp = static_cast<int>(mag >> f.man_bits);
  uint32_t man = mag & ((1u << f.man_bits) - 1);
  if (f.top == MinifloatFormat::kIeee && exp == (1 << f.exp_bits) - 1)
    return man ? nan : (neg ? -INFINITY : INFINITY);
  if (f.top == MinifloatFormat::kAllOnesNan && mag == (1u << (n - 1)) - 1) return nan;
  if (f.top == MinifloatFormat::kNegZeroNan && neg && mag == 0) return nan;
  double v = exp == 0 ? std::ldexp(man, 1 - f.bias - f.man_bits)
                      : std::ldexp(1.0 + std::ldexp(man, -f.man_bits), exp - f.bias);
  return neg ? -v : v;
}

// The non-negative finite values in code order, then the next step up beyond the largest (max +
// one ulp at max's exponent), which stands for overflow.
std::vector<double> value_ladder(const MinifloatFormat& f) {
  const uint32_t max_code = static_cast<uint32_t>(f.max_finite_code());
  std::vector<double> vals;
  for (uint32_t c = 0; c <= max_code; ++c) vals.push_back(decode_ref(f, c));
  double max = vals.back();
  vals.push_back(max + std::ldexp(1.0, static_cast<int>(std::floor(std::log2(max))) - f.man_bits));
  return vals;
}

// Nearest code to x (not NaN) without saturation, ties to the even code; rounding to the step
// beyond the largest finite value is an overflow.
// float8_e8m0fnu (no sign, no zero): the nearer power of two with a tie going up, the smallest for
// anything below it; zero, negatives, inf and an overflow are the NaN 0xFF.
uint32_t encode_ref(const MinifloatFormat& f, const std::vector<double>& vals, double x) {
  if (f.top == MinifloatFormat::kExponentOnly) {
    if (!(x > 0) || std::isinf(x)) return 255;
    if (x <= vals[0]) return 0;
    size_t hi = static_cast<size_t>(std::upper_bound(vals.begin(), vals.end(), x) - vals.begin());
    if (hi == vals.size()) return 255;
    const uint32_t code = static_cast<uint32_t>(x - vals[hi - 1] < vals[hi] - x ? hi - 1 : hi);
    return code > static_cast<uint32_t>(f.max_finite_code()) ? 255 : code;
  }
  const int n = f.bits();
  const uint32_t sign = std::signbit(x) ? 1u << (n - 1) : 0u;
  double a = std::fabs(x);
  const uint32_t max_code = static_cast<uint32_t>(f.max_finite_code());
  uint32_t code;
  if (a >= vals.back()) {
    code = max_code + 1;
  } else {
    size_t hi = static_cast<size_t>(std::upper_bound(vals.begin(), vals.end(), a) - vals.begin());
    size_t lo = hi - 1;
    double dlo = a - vals[lo], dhi = vals[hi] - a;
    code = static_cast<uint32_t>(dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi));
  }
  if (code > max_code) {  // overflow
    switch (f.top) {
      case MinifloatFormat::kIeee: return sign | (((1u << f.exp_bits) - 1) << f.man_bits);
      case MinifloatFormat::kAllOnesNan: return sign | ((1u << (n - 1)) - 1);
      case MinifloatFormat::kNegZeroNan: return 1u << (n - 1);
      case MinifloatFormat::kFinite: return sign | max_code;
    }
  }
  if (f.top == MinifloatFormat::kNegZeroNan && code == 0) return 0;
  return sign | code;
}

// out[i] = cast(to, in[i]) over n elements, in `lanes`-wide vectors (n a multiple of lanes).
Module cast_kernel(DataType from, DataType to, int lanes) {
  ir::Var n = ir::size_var("n"), i("i");
  ir::Buffer A = ir::decl_buffer({n}, from, "A"), B = ir::decl_buffer({n}, to, "B");
  ir::PrimExpr idx = lanes == 1 ? ir::PrimExpr(i) : ir::ramp(i * lanes, 1, lanes);
  tir::Stmt body = tir::buffer_store(B, ir::cast(ir::with_lanes(to, lanes), ir::buffer_load(A, {idx})), {idx});
  tir::PrimFunc fn = tir::make_prim_func("cast", {A, B}, tir::make_for(i, 0, lanes == 1 ? ir::PrimExpr(n) : ir::floordiv(n, lanes), body));
  return build_llvm({fn}, Target::parse("llvm"));
}

uint32_t code_at(const Tensor& t, size_t i) {
  return t.dtype().bits() == 16 ? static_cast<const uint16_t*>(t.data())[i] : static_cast<const uint8_t*>(t.data())[i];
}

class LowPrecision : public ::testing::TestWithParam<int> {};

TEST_P(LowPrecision, DecodesEveryBitPattern) {
  register_runtime_functions();
  for (DataType t : kTypes) {
    MinifloatFormat f = *ir::minifloat_format(t);
    const int64_t count = int64_t{1} << f.bits();
    Tensor in = Tensor::empty({count}, t), out = Tensor::empty({count}, DataType::float32());
    for (int64_t c = 0; c < count; ++c) {
      if (f.bits() == 16) static_cast<uint16_t*>(in.data())[c] = static_cast<uint16_t>(c);
      else static_cast<uint8_t*>(in.data())[c] = static_cast<uint8_t>(c);
    }
    cast_kernel(t, DataType::float32(), GetParam())["cast"](in, out);
    for (int64_t c = 0; c < count; ++c) {
      double want = decode_ref(f, static_cast<uint32_t>(c));
      float got = static_cast<const float*>(out.data())[c];
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(got)) << t << " code " << c << " gave " << got;
      } else {
        ASSERT_EQ(static_cast<double>(got), want) << t << " code " << c;
        ASSERT_EQ(std::signbit(got), std::signbit(want)) << t << " code " << c;
      }
    }
  }
}

TEST_P(LowPrecision, EncodesToTheNearestEvenValue) {
  register_runtime_functions();
  std::mt19937 rng(7);
  for (DataType t : kTypes) {
    MinifloatFormat f = *ir::minifloat_format(t);
    std::vector<float> xs = {0.0f, -0.0f, INFINITY, -INFINITY, 1e30f, -1e30f, 1e-30f, -1e-30f,
                             std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()};
    // Every finite value, the midpoints between neighbours and just either side of them.
    const uint32_t max_code = static_cast<uint32_t>(f.max_finite_code());
    for (uint32_t c = 0; c <= max_code; ++c) {
      float v = static_cast<float>(decode_ref(f, c));
      float next = static_cast<float>(c < max_code ? decode_ref(f, c + 1) : 2.0 * decode_ref(f, c));
      float mid = static_cast<float>((static_cast<double>(v) + next) / 2);
      for (float x : {v, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
        xs.push_back(x);
        xs.push_back(-x);
      }
    }
    // Random floats across the format's range and beyond.
    std::uniform_real_distribution<double> e(-f.bias - f.man_bits - 3.0, (1 << f.exp_bits) - f.bias + 2.0);
    for (int r = 0; r < 4000; ++r) xs.push_back(static_cast<float>((r % 2 ? -1 : 1) * std::exp2(e(rng))));
    while (xs.size() % 16) xs.push_back(1.0f);
    const std::vector<double> ladder = value_ladder(f);
    const int64_t count = static_cast<int64_t>(xs.size());
    Tensor in = Tensor::empty({count}, DataType::float32()), out = Tensor::empty({count}, t);
    std::memcpy(in.data(), xs.data(), xs.size() * sizeof(float));
    cast_kernel(DataType::float32(), t, GetParam())["cast"](in, out);
    for (size_t k = 0; k < xs.size(); ++k)
      ASSERT_EQ(code_at(out, k), encode_ref(f, ladder, xs[k])) << t << " from " << xs[k] << " (#" << k << ")";
    // NaN comes out as a NaN (float4_e2m1fn has none: a zero; float8_e8m0fnu's is 0xFF).
    Tensor nan_in = Tensor::empty({16}, DataType::float32()), nan_out = Tensor::empty({16}, t);
    for (int k = 0; k < 16; ++k) static_cast<float*>(nan_in.data())[k] = k % 2 ? -NAN : NAN;
    cast_kernel(DataType::float32(), t, GetParam())["cast"](nan_in, nan_out);
    for (size_t k = 0; k < 16; ++k) {
      double back = decode_ref(f, code_at(nan_out, k));
      if (f.top == MinifloatFormat::kFinite) EXPECT_EQ(back, 0.0) << t;
      else EXPECT_TRUE(std::isnan(back)) << t << " code " << code_at(nan_out, k);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Lanes, LowPrecision, ::testing::Values(1, 16));

// int4 / uint4: stored one per byte (low bits), wrapping like 4-bit integers.
TEST(LowPrecisionInt, Int4RoundTripsThroughFloatAndWraps) {
  register_runtime_functions();
  const float xs[] = {0, 1, -1, 7, -8, 7.9f, -8.9f, 2.5f, -2.5f, 8, 9, -9, 15, 16, 3, -3};
  Tensor in = Tensor::empty({16}, DataType::float32()), q = Tensor::empty({16}, DataType::int4()),
         back = Tensor::empty({16}, DataType::float32()), uq = Tensor::empty({16}, DataType::uint4()),
         uback = Tensor::empty({16}, DataType::float32());
  std::memcpy(in.data(), xs, sizeof xs);
  cast_kernel(DataType::float32(), DataType::int4(), 16)["cast"](in, q);
  cast_kernel(DataType::int4(), DataType::float32(), 1)["cast"](q, back);
  cast_kernel(DataType::float32(), DataType::uint4(), 1)["cast"](in, uq);
  cast_kernel(DataType::uint4(), DataType::float32(), 16)["cast"](uq, uback);
  for (int k = 0; k < 16; ++k) {
    int32_t t = static_cast<int32_t>(xs[k]);  // toward zero, then 4-bit wrap
    int32_t s = ((t & 15) ^ 8) - 8, u = t & 15;
    EXPECT_EQ(static_cast<const uint8_t*>(q.data())[k], static_cast<uint8_t>(t & 15)) << xs[k];
    EXPECT_EQ(static_cast<const float*>(back.data())[k], static_cast<float>(s)) << xs[k];
    EXPECT_EQ(static_cast<const float*>(uback.data())[k], static_cast<float>(u)) << xs[k];
  }
}

}  // namespace
}  // namespace anvil::codegen
