// The SPIR-V code generator's types, constants, conversions and expressions (the intrinsics are
// in codegen_spirv_math.cc).
#include "anvil/base/error.h"
#include "anvil/codegen/spirv/codegen_spirv_impl.h"
#include "anvil/ir/printer.h"

namespace anvil::codegen::spirv {
namespace {

[[noreturn]] void missing(const std::string& kernel, const char* what, const char* attribute) {
  value_error("vulkan codegen: kernel '", kernel, "' needs ", what, " but the target does not support it (", attribute,
              " is false; add -", attribute, "=1 or -from_device=N)");
}

}  // namespace

uint32_t CodegenSpirv::type_of(DataType t, Use use) {
  if (t.lanes() != 1) unsupported("the vector type " + ir::dtype_name(t) + " (multi-lane expressions)");
  if (t.is_bool()) return b_.type_bool();
  if (t.is_low_precision_float() || t.is_sub_byte_int() || !(ir::is_numeric(t)))
    unsupported("the type " + ir::dtype_name(t));
  const int bits = t.bits();
  // 8- and 16-bit types without the storage capability of their width (declared by
  // declare_params for the tensors) need the arithmetic capability even for conversions.
  const bool arith = use == Use::kArith ||
                     (bits == 8 && !b_.has_capability(spv::CapabilityStorageBuffer8BitAccess)) ||
                     (bits == 16 && !b_.has_capability(spv::CapabilityStorageBuffer16BitAccess));
  if (t.is_float()) {
    if (bits == 64) {
      if (!target_.supports_float64) missing(name_, "float64", "supports_float64");
      b_.capability(spv::CapabilityFloat64);
    } else if (bits == 16 && arith) {
      if (!target_.supports_float16) missing(name_, "float16 arithmetic", "supports_float16");
      b_.capability(spv::CapabilityFloat16);
    } else if (bits != 16 && bits != 32) {
      unsupported("the type " + ir::dtype_name(t));
    }
    return b_.type_float(bits);
  }
  if (bits == 64) {
    if (!target_.supports_int64) missing(name_, "64-bit integers", "supports_int64");
    b_.capability(spv::CapabilityInt64);
  } else if (bits == 16 && arith) {
    if (!target_.supports_int16) missing(name_, "16-bit integer arithmetic", "supports_int16");
    b_.capability(spv::CapabilityInt16);
  } else if (bits == 8 && arith) {
    if (!target_.supports_int8) missing(name_, "8-bit integer arithmetic", "supports_int8");
    b_.capability(spv::CapabilityInt8);
  }
  return b_.type_int(bits, t.is_int());
}

// 8- and 16-bit element types in storage buffers need the storage extensions.
void CodegenSpirv::require_buffer_access(DataType t) {
  if (t.bits() == 8) {
    if (!target_.supports_8bit_buffer) missing(name_, "8-bit types in storage buffers", "supports_8bit_buffer");
    b_.capability(spv::CapabilityStorageBuffer8BitAccess);
    b_.extension("SPV_KHR_8bit_storage");
  } else if (t.bits() == 16) {
    if (!target_.supports_16bit_buffer) missing(name_, "16-bit types in storage buffers", "supports_16bit_buffer");
    b_.capability(spv::CapabilityStorageBuffer16BitAccess);
    b_.extension("SPV_KHR_16bit_storage");
  }
}

uint32_t CodegenSpirv::const_int(DataType t, int64_t v) {
  if (t.is_bool()) return b_.const_bool(v != 0);
  return b_.const_int(type_of(t), t.bits(), t.is_int(), static_cast<uint64_t>(v));
}

uint32_t CodegenSpirv::const_float(DataType t, double v) { return b_.const_float(type_of(t), t.bits(), v); }

// A value of type `from` as `to` (TIR's Cast: float -> int truncates, x -> bool is x != 0).
uint32_t CodegenSpirv::convert(uint32_t v, DataType from, DataType to) {
  if (from == to) return v;
  const uint32_t rt = type_of(to, Use::kStorage);
  if (from.is_bool()) {
    if (to.is_float()) return b_.value(spv::OpSelect, rt, {v, const_float(to, 1), const_float(to, 0)});
    if (to.bits() >= 32) return b_.value(spv::OpSelect, rt, {v, const_int(to, 1), const_int(to, 0)});
    DataType wide = to.is_int() ? DataType::int32() : DataType::uint32();
    return convert(b_.value(spv::OpSelect, type_of(wide), {v, const_int(wide, 1), const_int(wide, 0)}), wide, to);
  }
  if (to.is_bool()) {
    if (from.is_float()) return b_.value(spv::OpFUnordNotEqual, rt, {v, const_float(from, 0)});
    if (from.bits() < 32 && !(from.bits() == 8 ? target_.supports_int8 : target_.supports_int16)) {
      DataType wide = from.is_int() ? DataType::int32() : DataType::uint32();
      return convert(convert(v, from, wide), wide, to);
    }
    return b_.value(spv::OpINotEqual, rt, {v, const_int(from, 0)});
  }
  if (from.is_float() && to.is_float()) return b_.value(spv::OpFConvert, rt, {v});
  if (from.is_float()) return b_.value(to.is_int() ? spv::OpConvertFToS : spv::OpConvertFToU, rt, {v});
  if (to.is_float()) return b_.value(from.is_int() ? spv::OpConvertSToF : spv::OpConvertUToF, rt, {v});
  if (from.bits() == to.bits()) return b_.value(spv::OpBitcast, rt, {v});
  // Width change with the source's signedness, then the target's signedness by a bitcast.
  DataType mid(from.code(), static_cast<uint8_t>(to.bits()));
  uint32_t w = b_.value(from.is_int() ? spv::OpSConvert : spv::OpUConvert, type_of(mid, Use::kStorage), {v});
  return mid == to ? w : b_.value(spv::OpBitcast, rt, {w});
}

const CodegenSpirv::BufferVar& CodegenSpirv::buffer_of(const ir::Buffer& b) const {
  auto it = buffers_.find(b->data().get());
  if (it == buffers_.end())
    not_implemented_error("vulkan codegen: kernel '", name_, "': access to buffer '", b->name(),
                          "', which is neither a parameter nor an allocation of the kernel");
  return it->second;
}

uint32_t CodegenSpirv::element_pointer(const BufferVar& buf, const PrimExpr& index) {
  if (index.dtype().lanes() != 1) unsupported("a vector access to buffer '" + buf.name + "'");
  uint32_t idx = expr(index);
  uint32_t ptr_t = b_.type_pointer(buf.storage, buf.elem_type);
  if (buf.in_struct) return b_.value(spv::OpAccessChain, ptr_t, {buf.var, const_i32(0), idx});
  return b_.value(spv::OpAccessChain, ptr_t, {buf.var, idx});
}

uint32_t CodegenSpirv::load(const PrimExpr& e) {
  auto* op = e.as<ir::BufferLoadNode>();
  if (op->indices().size() != 1)
    unsupported("a " + std::to_string(op->indices().size()) + "-d access to '" + op->buffer()->name() +
                "' (storage_flatten should have made it 1-d)");
  const BufferVar& buf = buffer_of(op->buffer());
  uint32_t ptr = element_pointer(buf, op->indices()[0]);
  uint32_t v = b_.value(spv::OpLoad, buf.elem_type, {ptr});
  if (buf.bool_as_u8) return convert(convert(v, DataType::uint8(), DataType::uint32()), DataType::uint32(), e.dtype());
  return v;
}

uint32_t CodegenSpirv::expr(const PrimExpr& e) {
  const DataType t = e.dtype();
  if (t.lanes() != 1) unsupported("the vector expression " + ir::to_string(e));
  switch (e.kind()) {
    case ir::ExprKind::kIntImm: return const_int(t, e.as<ir::IntImmNode>()->value());
    case ir::ExprKind::kFloatImm: return const_float(t, e.as<ir::FloatImmNode>()->value());
    case ir::ExprKind::kStringImm: unsupported("the string " + ir::to_string(e));
    case ir::ExprKind::kVar: {
      auto* v = e.as<ir::VarNode>();
      if (auto it = values_.find(v); it != values_.end()) return it->second;
      if (auto it = var_ptrs_.find(v); it != var_ptrs_.end()) return b_.value(spv::OpLoad, type_of(t), {it->second});
      not_implemented_error("vulkan codegen: kernel '", name_, "': variable '", v->name(), "' is not defined here");
    }
    case ir::ExprKind::kNot: return b_.value(spv::OpLogicalNot, type_of(t), {expr(e.as<ir::NotNode>()->a())});
    case ir::ExprKind::kSelect: {
      auto* op = e.as<ir::SelectNode>();
      uint32_t c = expr(op->cond()), x = expr(op->true_value()), y = expr(op->false_value());
      return b_.value(spv::OpSelect, type_of(t), {c, x, y});
    }
    case ir::ExprKind::kCast: {
      auto* op = e.as<ir::CastNode>();
      return convert(expr(op->value()), op->value().dtype(), t);
    }
    case ir::ExprKind::kLet: {
      auto* op = e.as<ir::LetNode>();
      values_[op->var().get()] = expr(op->value());
      return expr(op->body());
    }
    case ir::ExprKind::kCall: return call(e);
    case ir::ExprKind::kBufferLoad: return load(e);
    case ir::ExprKind::kRamp:
    case ir::ExprKind::kBroadcast: unsupported("the vector expression " + ir::to_string(e));
    case ir::ExprKind::kEQ:
    case ir::ExprKind::kNE:
    case ir::ExprKind::kLT:
    case ir::ExprKind::kLE:
    case ir::ExprKind::kGT:
    case ir::ExprKind::kGE: return compare(e);
    default: return binary(e);
  }
}

// floor(a / b) for integers: the truncating quotient, minus one when the remainder is non-zero
// and its sign differs from b's.
uint32_t CodegenSpirv::floor_div(uint32_t a, uint32_t b, DataType t) {
  const uint32_t ty = type_of(t), bt = b_.type_bool();
  if (t.is_uint()) return b_.value(spv::OpUDiv, ty, {a, b});
  uint32_t q = b_.value(spv::OpSDiv, ty, {a, b});
  uint32_t r = b_.value(spv::OpSRem, ty, {a, b});
  uint32_t zero = const_int(t, 0);
  uint32_t nonzero = b_.value(spv::OpINotEqual, bt, {r, zero});
  uint32_t r_neg = b_.value(spv::OpSLessThan, bt, {r, zero});
  uint32_t b_neg = b_.value(spv::OpSLessThan, bt, {b, zero});
  uint32_t differ = b_.value(spv::OpLogicalNotEqual, bt, {r_neg, b_neg});
  uint32_t fix = b_.value(spv::OpLogicalAnd, bt, {nonzero, differ});
  uint32_t q1 = b_.value(spv::OpISub, ty, {q, const_int(t, 1)});
  return b_.value(spv::OpSelect, ty, {fix, q1, q});
}

uint32_t CodegenSpirv::binary(const PrimExpr& e) {
  const DataType t = e.dtype();
  PrimExpr ea, eb;
  switch (e.kind()) {
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)   \
  case ir::ExprKind::k##Name:                          \
    ea = e.as<ir::Name##Node>()->a();                  \
    eb = e.as<ir::Name##Node>()->b();                  \
    break;
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    default: ANVIL_ICHECK(false, "vulkan codegen: unexpected expression kind ", ir::expr_kind_name(e.kind()));
  }
  const uint32_t ty = type_of(t);
  uint32_t a = expr(ea), b = expr(eb);
  const bool f = t.is_float(), s = t.is_int();
  switch (e.kind()) {
    case ir::ExprKind::kAdd: return b_.value(f ? spv::OpFAdd : spv::OpIAdd, ty, {a, b});
    case ir::ExprKind::kSub: return b_.value(f ? spv::OpFSub : spv::OpISub, ty, {a, b});
    case ir::ExprKind::kMul: return b_.value(f ? spv::OpFMul : spv::OpIMul, ty, {a, b});
    case ir::ExprKind::kDiv: return b_.value(f ? spv::OpFDiv : s ? spv::OpSDiv : spv::OpUDiv, ty, {a, b});
    case ir::ExprKind::kFloorDiv: {
      if (!f) return floor_div(a, b, t);
      uint32_t q = b_.value(spv::OpFDiv, ty, {a, b});
      return float_math(GLSLstd450Floor, t, {q});
    }
    // OpFMod takes the sign of the divisor: floor semantics. Signed integers go through OpSRem
    // (lavapipe's OpSMod was seen returning the truncating remainder).
    case ir::ExprKind::kFloorMod: {
      if (f || !s) return b_.value(f ? spv::OpFMod : spv::OpUMod, ty, {a, b});
      const uint32_t bt = b_.type_bool(), zero = const_int(t, 0);
      uint32_t r = b_.value(spv::OpSRem, ty, {a, b});
      uint32_t nonzero = b_.value(spv::OpINotEqual, bt, {r, zero});
      uint32_t differ = b_.value(spv::OpLogicalNotEqual, bt, {b_.value(spv::OpSLessThan, bt, {r, zero}),
                                                               b_.value(spv::OpSLessThan, bt, {b, zero})});
      uint32_t fix = b_.value(spv::OpLogicalAnd, bt, {nonzero, differ});
      return b_.value(spv::OpSelect, ty, {fix, b_.value(spv::OpIAdd, ty, {r, b}), r});
    }
    case ir::ExprKind::kMin:
      return b_.ext_glsl(ty, f ? GLSLstd450FMin : s ? GLSLstd450SMin : GLSLstd450UMin, {a, b});
    case ir::ExprKind::kMax:
      return b_.ext_glsl(ty, f ? GLSLstd450FMax : s ? GLSLstd450SMax : GLSLstd450UMax, {a, b});
    case ir::ExprKind::kAnd: return b_.value(spv::OpLogicalAnd, ty, {a, b});
    case ir::ExprKind::kOr: return b_.value(spv::OpLogicalOr, ty, {a, b});
    default: ANVIL_ICHECK(false, "vulkan codegen: unexpected binary kind ", ir::expr_kind_name(e.kind()));
  }
  return 0;
}

uint32_t CodegenSpirv::compare(const PrimExpr& e) {
  PrimExpr ea, eb;
  switch (e.kind()) {
    case ir::ExprKind::kEQ: ea = e.as<ir::EQNode>()->a(), eb = e.as<ir::EQNode>()->b(); break;
    case ir::ExprKind::kNE: ea = e.as<ir::NENode>()->a(), eb = e.as<ir::NENode>()->b(); break;
    case ir::ExprKind::kLT: ea = e.as<ir::LTNode>()->a(), eb = e.as<ir::LTNode>()->b(); break;
    case ir::ExprKind::kLE: ea = e.as<ir::LENode>()->a(), eb = e.as<ir::LENode>()->b(); break;
    case ir::ExprKind::kGT: ea = e.as<ir::GTNode>()->a(), eb = e.as<ir::GTNode>()->b(); break;
    default: ea = e.as<ir::GENode>()->a(), eb = e.as<ir::GENode>()->b(); break;
  }
  DataType t = ea.dtype();
  type_of(t);  // comparing is arithmetic on the operand type
  uint32_t a = expr(ea), b = expr(eb), bt = b_.type_bool();
  const ir::ExprKind k = e.kind();
  spv::Op op{};
  if (t.is_bool()) {
    if (k == ir::ExprKind::kEQ) return b_.value(spv::OpLogicalEqual, bt, {a, b});
    if (k == ir::ExprKind::kNE) return b_.value(spv::OpLogicalNotEqual, bt, {a, b});
    // Ordered comparisons of bools: false < true, compared as 0 / 1.
    a = convert(a, t, DataType::uint32());
    b = convert(b, t, DataType::uint32());
    t = DataType::uint32();
  }
  const bool f = t.is_float(), s = t.is_int();
  switch (k) {
    case ir::ExprKind::kEQ: op = f ? spv::OpFOrdEqual : spv::OpIEqual; break;
    case ir::ExprKind::kNE: op = f ? spv::OpFUnordNotEqual : spv::OpINotEqual; break;
    case ir::ExprKind::kLT: op = f ? spv::OpFOrdLessThan : s ? spv::OpSLessThan : spv::OpULessThan; break;
    case ir::ExprKind::kLE: op = f ? spv::OpFOrdLessThanEqual : s ? spv::OpSLessThanEqual : spv::OpULessThanEqual; break;
    case ir::ExprKind::kGT: op = f ? spv::OpFOrdGreaterThan : s ? spv::OpSGreaterThan : spv::OpUGreaterThan; break;
    default: op = f ? spv::OpFOrdGreaterThanEqual : s ? spv::OpSGreaterThanEqual : spv::OpUGreaterThanEqual; break;
  }
  return b_.value(op, bt, {a, b});
}

}  // namespace anvil::codegen::spirv
