// TIR -> LLVM: the low-precision types. LLVM 16 has no float8/float4 types and its bfloat lowers
// to libcalls this toolchain lacks, so a bfloat16 / float8_* / float4_e2m1fn value is its raw bit
// pattern (an integer of the storage width) and every use goes through float32: conversions are
// integer bit operations on the float32 pattern (formats: ir/minifloat.h), arithmetic and
// comparisons widen both operands to float32 and round the result back (one rounding per
// operation, as ONNX Runtime computes bfloat16). Sub-byte integers (int4, uint4, int2, uint2) are
// LLVM i4 / i2 values stored one per byte (zero-extended), so integer arithmetic wraps in 4 / 2
// bits.
#include <llvm/IR/Constants.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/codegen_llvm_impl.h"
#include "anvil/ir/minifloat.h"

namespace anvil::codegen {

using ir::DataType;
using ir::MinifloatFormat;

namespace {

MinifloatFormat format_of(DataType t) {
  std::optional<MinifloatFormat> f = ir::minifloat_format(ir::element_of(t));
  if (!f) throw_error(ErrorKind::kInternal, "llvm codegen: ", ir::dtype_name(t), " is not a low-precision float");
  return *f;
}

}  // namespace

llvm::Value* CodeGenLLVM::lowp_to_f32(DataType from, llvm::Value* bits) {
  MinifloatFormat f = format_of(from);
  const int n = f.bits(), m = f.man_bits, shift = 23 - m;
  llvm::Type* i32 = value_type(ir::with_lanes(DataType::int32(), from.lanes()));
  llvm::Type* f32 = value_type(ir::with_lanes(DataType::float32(), from.lanes()));
  auto k = [&](int64_t v) { return int_const(i32, v); };
  llvm::Value* c = b_.CreateZExt(bits, i32);
  if (f.top == MinifloatFormat::kExponentOnly) {
    // float8_e8m0fnu: the code is float32's exponent field (same bias); code 0 (2^-127) is the
    // float32 subnormal 0x00400000, all ones a quiet NaN.
    llvm::Value* out = b_.CreateShl(c, k(23));
    out = b_.CreateSelect(b_.CreateICmpEQ(c, k(0)), k(0x00400000), out);
    out = b_.CreateSelect(b_.CreateICmpEQ(c, k(0xff)), k(0x7fc00000), out);
    return b_.CreateBitCast(out, f32);
  }
  llvm::Value* sign = b_.CreateShl(b_.CreateLShr(c, k(n - 1)), k(31));
  llvm::Value* mag = b_.CreateAnd(c, k((1 << (n - 1)) - 1));
  llvm::Value* exp = b_.CreateLShr(mag, k(m));
  // Normal: move the fields into place and rebias the exponent.
  llvm::Value* out = b_.CreateAdd(b_.CreateShl(mag, k(shift)), k(int64_t{127 - f.bias} << 23));
  if (f.bias != 127) {
    // Subnormal (exponent 0): mantissa * 2^(1 - bias - man_bits), exact in float32. (bfloat16
    // shares float32's exponent range, so its subnormals are float32 subnormals already.)
    llvm::Value* man = b_.CreateAnd(mag, k((1 << m) - 1));
    llvm::Value* sub = b_.CreateFMul(b_.CreateUIToFP(man, f32), float_const(f32, std::ldexp(1.0, 1 - f.bias - m)));
    out = b_.CreateSelect(b_.CreateICmpEQ(exp, k(0)), b_.CreateBitCast(sub, i32), out);
  }
  llvm::Value* qnan = k(0x7fc00000);
  switch (f.top) {
    case MinifloatFormat::kIeee: {
      llvm::Value* top = b_.CreateICmpEQ(exp, k((1 << f.exp_bits) - 1));
      llvm::Value* man_bits = b_.CreateShl(b_.CreateAnd(mag, k((1 << m) - 1)), k(shift));
      // inf stays inf; a NaN keeps its payload and comes out quiet.
      out = b_.CreateSelect(top, b_.CreateOr(k(0x7f800000), b_.CreateSelect(b_.CreateICmpEQ(man_bits, k(0)), k(0), b_.CreateOr(man_bits, k(0x00400000)))), out);
      break;
    }
    case MinifloatFormat::kAllOnesNan:
      out = b_.CreateSelect(b_.CreateICmpEQ(mag, k((1 << (n - 1)) - 1)), qnan, out);
      break;
    case MinifloatFormat::kNegZeroNan:
      out = b_.CreateSelect(b_.CreateICmpEQ(c, k(1 << (n - 1))), qnan, out);
      break;
    case MinifloatFormat::kFinite:
    case MinifloatFormat::kExponentOnly: break;  // decoded above
  }
  return b_.CreateBitCast(b_.CreateOr(out, sign), f32);
}

llvm::Value* CodeGenLLVM::f32_to_lowp(DataType to, llvm::Value* x) {
  MinifloatFormat f = format_of(to);
  const int n = f.bits(), m = f.man_bits, shift = 23 - m;
  llvm::Type* i32 = value_type(ir::with_lanes(DataType::int32(), to.lanes()));
  llvm::Type* f32 = value_type(ir::with_lanes(DataType::float32(), to.lanes()));
  auto k = [&](int64_t v) { return int_const(i32, v); };
  llvm::Value* u = b_.CreateBitCast(x, i32);
  if (f.top == MinifloatFormat::kExponentOnly) {
    // float8_e8m0fnu (ir/minifloat.h): a normal float32 rounds at its exponent field, mantissa
    // >= half (1.5 * 2^e) up, a carry out of 254 giving 255, the NaN; a subnormal in
    // [1.5 * 2^-127, 2^-126) is 2^-126 (code 1), a smaller one 2^-127 (code 0). Zero, negatives
    // (the sign bit set: -0 too), inf and NaN are NaN.
    llvm::Value* normal = b_.CreateLShr(b_.CreateAdd(u, k(0x00400000)), k(23));
    llvm::Value* sub = b_.CreateZExt(b_.CreateICmpUGE(u, k(0x00600000)), i32);
    llvm::Value* code = b_.CreateSelect(b_.CreateICmpULT(u, k(0x00800000)), sub, normal);
    llvm::Value* nan = b_.CreateOr(b_.CreateICmpSLE(u, k(0)), b_.CreateICmpUGE(u, k(0x7f800000)));
    return b_.CreateTrunc(b_.CreateSelect(nan, k(0xff), code), value_type(to));
  }
  llvm::Value* sign = b_.CreateShl(b_.CreateLShr(u, k(31)), k(n - 1));
  llvm::Value* a = b_.CreateAnd(u, k(0x7fffffff));
  llvm::Value* is_nan = b_.CreateICmpUGT(a, k(0x7f800000));
  // Normal range: round the float32 pattern to nearest even at the target's last mantissa bit (a
  // carry moves into the exponent, as it should), then rebias. |x| <= inf cannot wrap.
  llvm::Value* half_minus_one = k((int64_t{1} << (shift - 1)) - 1);
  llvm::Value* odd = b_.CreateAnd(b_.CreateLShr(a, k(shift)), k(1));
  llvm::Value* rounded = b_.CreateAdd(b_.CreateAdd(a, half_minus_one), odd);
  llvm::Value* code = b_.CreateSub(b_.CreateLShr(rounded, k(shift)), k(int64_t{127 - f.bias} << m));
  if (f.bias != 127) {
    // Below the smallest normal 2^(1 - bias): code = roundeven(|x| * 2^(bias - 1 + man_bits)) (the
    // scaling is exact); a result of 2^man_bits is the smallest normal's code, as it should be.
    llvm::Value* scaled = b_.CreateFMul(b_.CreateBitCast(a, f32), float_const(f32, std::ldexp(1.0, f.bias - 1 + m)));
    llvm::Value* sub = b_.CreateFPToUI(b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, scaled), i32);
    code = b_.CreateSelect(b_.CreateICmpULT(a, k(int64_t{128 - f.bias} << 23)), sub, code);
  }
  const int all = (1 << (n - 1)) - 1;  // magnitude bits all ones
  llvm::Value* overflow = b_.CreateICmpSGT(code, k(f.max_finite_code()));
  llvm::Value* nan_code = nullptr;
  llvm::Value* over_code = nullptr;
  switch (f.top) {
    case MinifloatFormat::kIeee:
      over_code = k(((1 << f.exp_bits) - 1) << m);                  // inf
      nan_code = k((((1 << f.exp_bits) - 1) << m) | (1 << (m - 1)));  // quiet NaN
      break;
    case MinifloatFormat::kAllOnesNan: over_code = nan_code = k(all); break;
    case MinifloatFormat::kNegZeroNan: over_code = nan_code = k(0); break;  // 0x80 once signed below
    case MinifloatFormat::kFinite:
      over_code = k(f.max_finite_code());
      nan_code = k(0);  // no NaN to give: +-0 (ml_dtypes gives a zero too)
      break;
    case MinifloatFormat::kExponentOnly: break;  // converted above
  }
  code = b_.CreateSelect(is_nan, nan_code, b_.CreateSelect(overflow, over_code, code));
  if (f.top == MinifloatFormat::kNegZeroNan) {
    // No -0: a zero is +0 whatever its sign; NaN (and overflow) is the sign bit alone.
    llvm::Value* special = b_.CreateOr(is_nan, overflow);
    llvm::Value* zero = b_.CreateICmpEQ(code, k(0));
    sign = b_.CreateSelect(special, k(1 << (n - 1)), b_.CreateSelect(zero, k(0), sign));
  }
  return b_.CreateTrunc(b_.CreateOr(code, sign), value_type(to));
}

}  // namespace anvil::codegen
