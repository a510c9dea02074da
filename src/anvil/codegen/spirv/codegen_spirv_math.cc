// The intrinsics of intrinsics.def in SPIR-V: GLSL.std.450 instructions where one exists, short
// formulas otherwise (erf, sigmoid, log10, copysign, isfinite, over-wide shifts).
//
// GLSL.std.450's transcendental instructions (Exp, Log, Pow, Sin, Tanh, ...) take 16- and 32-bit
// floats only: float64 arguments are computed in float32 and converted back (so float64 exp,
// log, pow, trigonometric and hyperbolic functions have float32 accuracy). erf uses Abramowitz &
// Stegun 7.1.26 (absolute error below 1.5e-7). tanh clamps its argument to [-9, 9], where it is
// already +-1 in float32, so that implementations built on exp do not overflow to NaN.
#include "anvil/base/error.h"
#include "anvil/codegen/spirv/codegen_spirv_impl.h"

namespace anvil::codegen::spirv {
namespace {

bool float32_only(uint32_t instruction) {
  switch (instruction) {
    case GLSLstd450Sin: case GLSLstd450Cos: case GLSLstd450Tan: case GLSLstd450Asin: case GLSLstd450Acos:
    case GLSLstd450Atan: case GLSLstd450Sinh: case GLSLstd450Cosh: case GLSLstd450Tanh: case GLSLstd450Asinh:
    case GLSLstd450Acosh: case GLSLstd450Atanh: case GLSLstd450Exp: case GLSLstd450Log: case GLSLstd450Exp2:
    case GLSLstd450Log2: case GLSLstd450Pow: return true;
    default: return false;
  }
}

}  // namespace

uint32_t CodegenSpirv::float_math(uint32_t instruction, DataType t, const std::vector<uint32_t>& args) {
  if (t.bits() == 64 && float32_only(instruction)) {
    DataType f32 = DataType::float32();
    std::vector<uint32_t> narrow;
    for (uint32_t a : args) narrow.push_back(convert(a, t, f32));
    return convert(b_.ext_glsl(type_of(f32), instruction, narrow), f32, t);
  }
  return b_.ext_glsl(type_of(t), instruction, args);
}

uint32_t CodegenSpirv::erf(uint32_t x, DataType t) {
  const uint32_t ty = type_of(t);
  auto c = [&](double v) { return const_float(t, v); };
  auto mul = [&](uint32_t a, uint32_t b) { return b_.value(spv::OpFMul, ty, {a, b}); };
  auto add = [&](uint32_t a, uint32_t b) { return b_.value(spv::OpFAdd, ty, {a, b}); };
  uint32_t ax = float_math(GLSLstd450FAbs, t, {x});
  uint32_t tt = b_.value(spv::OpFDiv, ty, {c(1.0), add(c(1.0), mul(c(0.3275911), ax))});
  uint32_t poly = c(1.061405429);
  for (double k : {-1.453152027, 1.421413741, -0.284496736, 0.254829592}) poly = add(mul(poly, tt), c(k));
  poly = mul(poly, tt);
  uint32_t neg_x2 = b_.value(spv::OpFNegate, ty, {mul(x, x)});
  uint32_t y = b_.value(spv::OpFSub, ty, {c(1.0), mul(poly, float_math(GLSLstd450Exp, t, {neg_x2}))});
  return mul(float_math(GLSLstd450FSign, t, {x}), y);
}

// x << k or x >> k with intrinsics.def's rule for k >= bits (k read as unsigned).
uint32_t CodegenSpirv::shift(uint32_t x, uint32_t k, DataType t, bool left) {
  const uint32_t ty = type_of(t), bt = b_.type_bool();
  DataType ut(DataType::kUInt, static_cast<uint8_t>(t.bits()));
  uint32_t ku = t.is_int() ? bitcast(k, ut) : k;
  type_of(ut);
  uint32_t over = b_.value(spv::OpUGreaterThanEqual, bt, {ku, const_int(ut, t.bits())});
  spv::Op op = left ? spv::OpShiftLeftLogical : t.is_int() ? spv::OpShiftRightArithmetic : spv::OpShiftRightLogical;
  uint32_t r = b_.value(op, ty, {x, k});
  uint32_t fallback = const_int(t, 0);
  if (!left && t.is_int()) fallback = b_.value(spv::OpShiftRightArithmetic, ty, {x, const_int(t, t.bits() - 1)});
  return b_.value(spv::OpSelect, ty, {over, fallback, r});
}

uint32_t CodegenSpirv::call(const PrimExpr& e) {
  using ir::CallOp;
  auto* op = e.as<ir::CallNode>();
  const DataType at = op->args()[0].dtype();
  std::vector<uint32_t> a;
  for (const auto& x : op->args()) a.push_back(expr(x));
  const uint32_t ty = type_of(e.dtype());
  auto glsl = [&](uint32_t instruction) { return float_math(instruction, at, a); };
  switch (op->op()) {
    case CallOp::k_exp: return glsl(GLSLstd450Exp);
    case CallOp::k_log: return glsl(GLSLstd450Log);
    case CallOp::k_sqrt: return glsl(GLSLstd450Sqrt);
    case CallOp::k_rsqrt: return glsl(GLSLstd450InverseSqrt);
    case CallOp::k_tanh: {
      uint32_t x = float_math(GLSLstd450FClamp, at, {a[0], const_float(at, -9.0), const_float(at, 9.0)});
      return float_math(GLSLstd450Tanh, at, {x});
    }
    case CallOp::k_erf: return erf(a[0], at);
    case CallOp::k_sigmoid: {
      uint32_t neg = b_.value(spv::OpFNegate, ty, {a[0]});
      uint32_t den = b_.value(spv::OpFAdd, ty, {const_float(at, 1.0), float_math(GLSLstd450Exp, at, {neg})});
      return b_.value(spv::OpFDiv, ty, {const_float(at, 1.0), den});
    }
    case CallOp::k_pow: return glsl(GLSLstd450Pow);
    case CallOp::k_floor: return glsl(GLSLstd450Floor);
    case CallOp::k_ceil: return glsl(GLSLstd450Ceil);
    case CallOp::k_round: return glsl(GLSLstd450RoundEven);
    case CallOp::k_trunc: return glsl(GLSLstd450Trunc);
    case CallOp::k_abs:
      if (at.is_float()) return glsl(GLSLstd450FAbs);
      if (at.is_uint()) return a[0];
      return b_.ext_glsl(ty, GLSLstd450SAbs, a);
    case CallOp::k_fma: return glsl(GLSLstd450Fma);
    case CallOp::k_sin: return glsl(GLSLstd450Sin);
    case CallOp::k_cos: return glsl(GLSLstd450Cos);
    case CallOp::k_tan: return glsl(GLSLstd450Tan);
    case CallOp::k_asin: return glsl(GLSLstd450Asin);
    case CallOp::k_acos: return glsl(GLSLstd450Acos);
    case CallOp::k_atan: return glsl(GLSLstd450Atan);
    case CallOp::k_sinh: return glsl(GLSLstd450Sinh);
    case CallOp::k_cosh: return glsl(GLSLstd450Cosh);
    case CallOp::k_asinh: return glsl(GLSLstd450Asinh);
    case CallOp::k_acosh: return glsl(GLSLstd450Acosh);
    case CallOp::k_atanh: return glsl(GLSLstd450Atanh);
    case CallOp::k_log2: return glsl(GLSLstd450Log2);
    case CallOp::k_log10:
      return b_.value(spv::OpFMul, ty, {glsl(GLSLstd450Log2), const_float(at, 0.30102999566398119521)});
    case CallOp::k_copysign: {
      // |x| with y's sign bit, on the bits (float16 through float32: exact both ways).
      DataType ft = at.bits() == 16 ? DataType::float32() : at;
      DataType ut(DataType::kUInt, static_cast<uint8_t>(ft.bits()));
      uint32_t x = convert(a[0], at, ft), y = convert(a[1], at, ft);
      uint32_t uty = type_of(ut);
      uint64_t sign = 1ull << (ft.bits() - 1);
      uint32_t xb = b_.value(spv::OpBitwiseAnd, uty, {bitcast(x, ut), const_int(ut, static_cast<int64_t>(sign - 1))});
      uint32_t yb = b_.value(spv::OpBitwiseAnd, uty, {bitcast(y, ut), const_int(ut, static_cast<int64_t>(sign))});
      uint32_t r = bitcast(b_.value(spv::OpBitwiseOr, uty, {xb, yb}), ft);
      return convert(r, ft, at);
    }
    case CallOp::k_isnan: return b_.value(spv::OpIsNan, ty, {a[0]});
    case CallOp::k_isinf: return b_.value(spv::OpIsInf, ty, {a[0]});
    case CallOp::k_isfinite: {
      uint32_t n = b_.value(spv::OpIsNan, ty, {a[0]}), i = b_.value(spv::OpIsInf, ty, {a[0]});
      return b_.value(spv::OpLogicalNot, ty, {b_.value(spv::OpLogicalOr, ty, {n, i})});
    }
    case CallOp::k_bitwise_and: return b_.value(spv::OpBitwiseAnd, ty, a);
    case CallOp::k_bitwise_or: return b_.value(spv::OpBitwiseOr, ty, a);
    case CallOp::k_bitwise_xor: return b_.value(spv::OpBitwiseXor, ty, a);
    case CallOp::k_bitwise_not: return b_.value(spv::OpNot, ty, a);
    case CallOp::k_shift_left: return shift(a[0], a[1], at, true);
    case CallOp::k_shift_right: return shift(a[0], a[1], at, false);
  }
  unsupported(std::string("the intrinsic ") + std::string(ir::call_op_name(op->op())));
}

}  // namespace anvil::codegen::spirv
