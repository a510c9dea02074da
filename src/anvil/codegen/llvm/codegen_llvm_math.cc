// TIR -> LLVM: math intrinsics. exp, tanh, erf and sigmoid on float32 (scalars and vectors;
// float16 goes through float32) are emitted inline as branch-free polynomial code, so a vector
// loop stays a vector loop (no scalar libm calls); float64 uses llvm.exp and per-lane libm calls
// for tanh/erf. log, log2, log10, sin, cos, sqrt, floor, ceil, trunc, round (to even), abs,
// copysign, fma, pow are LLVM intrinsics (sin, cos, log2, log10 and pow on vectors become one
// libm call per lane in LLVM's back end: correct, not fast); rsqrt is 1 / sqrt. tan, asin, acos,
// atan, sinh, cosh, asinh, acosh, atanh have no LLVM 16 intrinsic: one libm call per lane
// (tanf/tan..., float16 through float32). isnan/isinf/isfinite test the bits as integers, so
// fast-math (which assumes no NaN/inf) cannot fold them away. Bitwise ops are and/or/xor/not;
// shifts select the over-wide result (intrinsics.def) instead of LLVM's poison.
//
//   exp(x):  x clamped to [-104, 89]; n = floor(x log2(e) + 1/2); r = x - n ln2 (two-part ln2);
//            e^r by Cephes' degree-7 polynomial; 2^n applied as 2^(n>>1) * 2^(n - (n>>1)) so
//            the result underflows and overflows gracefully (denormals, 0, +inf). Error
//            <= ~2 ulp over the normal range; NaN in, NaN out.
//   tanh(x): |x| < 0.625: odd polynomial (Cephes); otherwise 1 - 2 / (exp(2|x|) + 1) with x's sign.
//   erf(x):  |x| < 0.5: Taylor series to x^13 (error < 1e-9); otherwise Abramowitz & Stegun
//            7.1.26, 1 - t (a1 + t (a2 + ...)) exp(-x^2), t = 1 / (1 + p|x|) (abs error
//            < 2e-7), with x's sign.
#include <llvm/IR/Constants.h>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/codegen_llvm_impl.h"

namespace anvil::codegen {

using ir::CallOp;
using ir::DataType;

namespace {

// Horner evaluation c[0] + x (c[1] + x (c[2] + ...)) with coefficients highest first given in
// `high_first` order: returns ((c0 x + c1) x + c2) ...
llvm::Value* horner(llvm::IRBuilder<>& b, llvm::Value* x, std::initializer_list<double> high_first) {
  llvm::Type* t = x->getType();
  llvm::Value* acc = nullptr;
  for (double c : high_first) {
    llvm::Value* k = llvm::ConstantFP::get(t, c);
    acc = acc ? b.CreateFAdd(b.CreateFMul(acc, x), k) : k;
  }
  return acc;
}

}  // namespace

llvm::Value* CodeGenLLVM::exp_f32(llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Type* it = t->isVectorTy() ? llvm::VectorType::get(b_.getInt32Ty(), llvm::cast<llvm::VectorType>(t)->getElementCount())
                                   : static_cast<llvm::Type*>(b_.getInt32Ty());
  llvm::Value* lo = float_const(t, -104.0);
  llvm::Value* hi = float_const(t, 89.0);
  llvm::Value* xc = b_.CreateSelect(b_.CreateFCmpOLT(x, lo), lo, x);
  xc = b_.CreateSelect(b_.CreateFCmpOGT(xc, hi), hi, xc);
  llvm::Value* n = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor,
                                           b_.CreateFAdd(b_.CreateFMul(xc, float_const(t, 1.44269504088896341)), float_const(t, 0.5)));
  llvm::Value* r = b_.CreateFSub(xc, b_.CreateFMul(n, float_const(t, 0.693359375)));
  r = b_.CreateFSub(r, b_.CreateFMul(n, float_const(t, -2.12194440e-4)));
  llvm::Value* p = horner(b_, r, {1.9875691500E-4, 1.3981999507E-3, 8.3334519073E-3, 4.1665795894E-2, 1.6666665459E-1, 5.0000001201E-1});
  p = b_.CreateFAdd(b_.CreateFAdd(b_.CreateFMul(b_.CreateFMul(p, r), r), r), float_const(t, 1.0));
  llvm::Value* ni = b_.CreateFPToSI(n, it);
  llvm::Value* n1 = b_.CreateAShr(ni, int_const(it, 1));
  llvm::Value* n2 = b_.CreateSub(ni, n1);
  auto pow2 = [&](llvm::Value* k) {
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, int_const(it, 127)), int_const(it, 23)), t);
  };
  llvm::Value* y = b_.CreateFMul(b_.CreateFMul(p, pow2(n1)), pow2(n2));
  return b_.CreateSelect(b_.CreateFCmpUNO(x, x), x, y);
}

llvm::Value* CodeGenLLVM::tanh_f32(llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b_.CreateFMul(x, x);
  llvm::Value* small = horner(b_, z, {-5.70498872745E-3, 2.06390887954E-2, -5.37397155531E-2, 1.33314422036E-1, -3.33332819422E-1});
  small = b_.CreateFAdd(b_.CreateFMul(b_.CreateFMul(small, z), x), x);
  llvm::Value* e = exp_f32(b_.CreateFAdd(a, a));
  llvm::Value* large = b_.CreateFSub(float_const(t, 1.0), b_.CreateFDiv(float_const(t, 2.0), b_.CreateFAdd(e, float_const(t, 1.0))));
  large = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b_.CreateSelect(b_.CreateFCmpOLT(a, float_const(t, 0.625)), small, large);
}

llvm::Value* CodeGenLLVM::erf_f32(llvm::Value* x) {
  llvm::Type* t = x->getType();
  llvm::Value* a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* z = b_.CreateFMul(x, x);
  // 2/sqrt(pi) * sum (-1)^k x^(2k+1) / (k! (2k+1)), k = 0..6, as x * P(x^2).
  llvm::Value* small = horner(b_, z, {0.00012055332981789664, -0.0008548327023450853, 0.005223977625442188,
                                      -0.026866170645131252, 0.11283791670955126, -0.37612638903183754,
                                      1.1283791670955126});
  small = b_.CreateFMul(small, x);
  llvm::Value* tt = b_.CreateFDiv(float_const(t, 1.0), b_.CreateFAdd(float_const(t, 1.0), b_.CreateFMul(a, float_const(t, 0.3275911))));
  llvm::Value* poly = b_.CreateFMul(horner(b_, tt, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592}), tt);
  llvm::Value* large = b_.CreateFSub(float_const(t, 1.0), b_.CreateFMul(poly, exp_f32(b_.CreateFNeg(b_.CreateFMul(a, a)))));
  large = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, large, x);
  return b_.CreateSelect(b_.CreateFCmpOLT(a, float_const(t, 0.5)), small, large);
}

llvm::Value* CodeGenLLVM::math_unary_f32(CallOp op, llvm::Value* x) {
  llvm::Type* t = x->getType();
  switch (op) {
    case CallOp::k_exp: return exp_f32(x);
    case CallOp::k_tanh: return tanh_f32(x);
    case CallOp::k_erf: return erf_f32(x);
    case CallOp::k_sigmoid:
      return b_.CreateFDiv(float_const(t, 1.0), b_.CreateFAdd(float_const(t, 1.0), exp_f32(b_.CreateFNeg(x))));
    default: break;
  }
  return nullptr;
}

llvm::Value* CodeGenLLVM::per_lane_libm(const char* name, llvm::Value* x, DataType t) {
  llvm::Type* et = value_type(ir::element_of(t));
  llvm::FunctionCallee fn = mod_.getOrInsertFunction(name, llvm::FunctionType::get(et, {et}, false));
  if (t.lanes() == 1) return b_.CreateCall(fn, {x});
  llvm::Value* out = llvm::UndefValue::get(x->getType());
  for (int l = 0; l < t.lanes(); ++l) {
    llvm::Value* lane = b_.CreateExtractElement(x, static_cast<uint64_t>(l));
    out = b_.CreateInsertElement(out, b_.CreateCall(fn, {lane}), static_cast<uint64_t>(l));
  }
  return out;
}

// The libm function `name` (double; "f" appended for float32) per lane; float16 through float32.
llvm::Value* CodeGenLLVM::libm_unary(const char* name, llvm::Value* x, DataType t) {
  if (t.bits() == 16) {
    DataType f = ir::with_lanes(DataType::float32(), t.lanes());
    return b_.CreateFPTrunc(libm_unary(name, b_.CreateFPExt(x, value_type(f)), f), x->getType());
  }
  std::string fn = t.bits() == 32 ? std::string(name) + "f" : std::string(name);
  return per_lane_libm(fn.c_str(), x, t);
}

// isnan/isinf/isfinite of float x (dtype t) on its bits: |bits| against the exponent mask.
llvm::Value* CodeGenLLVM::float_class(CallOp op, llvm::Value* x, DataType t) {
  int bits = t.bits();
  llvm::Type* it = value_type(DataType(DataType::kInt, static_cast<uint8_t>(bits), static_cast<uint16_t>(t.lanes())));
  uint64_t sign = uint64_t{1} << (bits - 1);
  uint64_t inf = bits == 16 ? 0x7c00 : bits == 32 ? 0x7f800000 : 0x7ff0000000000000;
  llvm::Value* a = b_.CreateAnd(b_.CreateBitCast(x, it), llvm::ConstantInt::get(it, sign - 1));
  llvm::Value* e = llvm::ConstantInt::get(it, inf);
  if (op == CallOp::k_isnan) return b_.CreateICmpUGT(a, e);
  if (op == CallOp::k_isinf) return b_.CreateICmpEQ(a, e);
  return b_.CreateICmpULT(a, e);
}

// The kInteger intrinsics on values of int/uint dtype t.
llvm::Value* CodeGenLLVM::call_bitwise(CallOp op, const std::vector<llvm::Value*>& a, DataType t) {
  switch (op) {
    case CallOp::k_bitwise_and: return b_.CreateAnd(a[0], a[1]);
    case CallOp::k_bitwise_or: return b_.CreateOr(a[0], a[1]);
    case CallOp::k_bitwise_xor: return b_.CreateXor(a[0], a[1]);
    case CallOp::k_bitwise_not: return b_.CreateNot(a[0]);
    case CallOp::k_shift_left:
    case CallOp::k_shift_right: {
      // An amount >= bits (unsigned compare: negative ones too) is poison in LLVM; select the
      // defined result instead (a select never yields its unchosen operand's poison).
      llvm::Type* ty = a[0]->getType();
      llvm::Value* wide = b_.CreateICmpUGE(a[1], int_const(ty, t.bits()));
      llvm::Value* shifted = op == CallOp::k_shift_left ? b_.CreateShl(a[0], a[1])
                             : t.is_int()                ? b_.CreateAShr(a[0], a[1])
                                                         : b_.CreateLShr(a[0], a[1]);
      llvm::Value* over = op == CallOp::k_shift_right && t.is_int() ? b_.CreateAShr(a[0], int_const(ty, t.bits() - 1))
                                                                    : int_const(ty, 0);
      return b_.CreateSelect(wide, over, shifted);
    }
    default: break;
  }
  not_implemented_error("llvm codegen: ", func_name_, ": ", ir::call_op_name(op), " on ", ir::dtype_name(t));
}

llvm::Value* CodeGenLLVM::call_math(const ir::CallNode* op) {
  DataType t = op->args()[0].dtype();  // the result's, except for isnan & co (bool)
  if (t.is_low_precision_float())
    not_implemented_error("llvm codegen: ", func_name_, ": ", ir::call_op_name(op->op()), " on ", ir::dtype_name(t),
                          " (cast to float32 for the computation)");
  std::vector<llvm::Value*> args;
  for (const auto& a : op->args()) args.push_back(expr(a));
  llvm::Value* x = args[0];
  CallOp k = op->op();
  if (k == CallOp::k_abs) {
    if (t.is_float()) return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    if (t.is_uint()) return x;
    return b_.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b_.getFalse());
  }
  if (ir::call_op_kind(k) == ir::IntrinsicKind::kInteger) return call_bitwise(k, args, t);
  if (!t.is_float()) not_implemented_error("llvm codegen: ", func_name_, ": ", ir::call_op_name(k), " on ", ir::dtype_name(t));
  if (ir::call_op_kind(k) == ir::IntrinsicKind::kFloatTest) return float_class(k, x, t);
  if (k == CallOp::k_exp || k == CallOp::k_tanh || k == CallOp::k_erf || k == CallOp::k_sigmoid) {
    if (t.bits() == 32) return math_unary_f32(k, x);
    if (t.bits() == 16) {
      llvm::Type* ft = value_type(ir::with_lanes(DataType::float32(), t.lanes()));
      return b_.CreateFPTrunc(math_unary_f32(k, b_.CreateFPExt(x, ft)), x->getType());
    }
    // float64
    switch (k) {
      case CallOp::k_exp: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x);
      case CallOp::k_tanh: return per_lane_libm("tanh", x, t);
      case CallOp::k_erf: return per_lane_libm("erf", x, t);
      default: {
        llvm::Value* e = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, b_.CreateFNeg(x));
        return b_.CreateFDiv(float_const(x->getType(), 1.0), b_.CreateFAdd(float_const(x->getType(), 1.0), e));
      }
    }
  }
  switch (k) {
    case CallOp::k_log: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x);
    case CallOp::k_sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
    case CallOp::k_rsqrt:
      return b_.CreateFDiv(float_const(x->getType(), 1.0), b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x));
    case CallOp::k_floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
    case CallOp::k_ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
    case CallOp::k_round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    case CallOp::k_pow: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, args[1]);
    case CallOp::k_fma: return b_.CreateIntrinsic(llvm::Intrinsic::fma, {x->getType()}, {x, args[1], args[2]});
    case CallOp::k_sin: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x);
    case CallOp::k_cos: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x);
    case CallOp::k_log2: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log2, x);
    case CallOp::k_log10: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log10, x);
    case CallOp::k_trunc: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
    case CallOp::k_copysign: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, x, args[1]);
    case CallOp::k_tan: return libm_unary("tan", x, t);
    case CallOp::k_asin: return libm_unary("asin", x, t);
    case CallOp::k_acos: return libm_unary("acos", x, t);
    case CallOp::k_atan: return libm_unary("atan", x, t);
    case CallOp::k_sinh: return libm_unary("sinh", x, t);
    case CallOp::k_cosh: return libm_unary("cosh", x, t);
    case CallOp::k_asinh: return libm_unary("asinh", x, t);
    case CallOp::k_acosh: return libm_unary("acosh", x, t);
    case CallOp::k_atanh: return libm_unary("atanh", x, t);
    default: break;
  }
  not_implemented_error("llvm codegen: ", func_name_, ": intrinsic ", ir::call_op_name(k));
}

}  // namespace anvil::codegen
