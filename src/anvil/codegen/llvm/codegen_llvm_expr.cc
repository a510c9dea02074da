// TIR -> LLVM: expressions, buffer loads and stores. Integer semantics follow ir/eval.h: wrapping
// arithmetic (no nsw/nuw), truncating Div, flooring FloorDiv/FloorMod (also for negative
// operands), unsigned compares for uint. Vector dtypes are LLVM vectors: a Ramp index with
// stride 1 is one vector load/store, a load with a constant stride of 2-4 one load of the span
// and a shuffle, a Broadcast index one scalar load splatted, any other vector index a masked
// gather/scatter with all lanes on. Alignment (access_align): the base
// alignment of the buffer's data var (Allocate: 64 bytes; tensor parameters: their element size,
// checked at the kernel entry) combined with the modular set of the index (arith/modular.h), so
// a vector load of A[ramp(i * 16, 1, 16)] from a 64-byte aligned float buffer is `align 64`;
// gathers and scatters use the element alignment.
#include <llvm/IR/Constants.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/codegen_llvm_impl.h"
#include "anvil/ir/printer.h"

namespace anvil::codegen {

using ir::DataType;
using ir::ExprKind;
using ir::PrimExpr;

llvm::Value* CodeGenLLVM::binary(ExprKind kind, DataType t, llvm::Value* a, llvm::Value* b) {
  if (t.is_low_precision_float()) {
    // Computed in float32, rounded back once (comparisons give bool and need no rounding).
    DataType f = ir::with_lanes(DataType::float32(), t.lanes());
    llvm::Value* r = binary(kind, f, lowp_to_f32(t, a), lowp_to_f32(t, b));
    return r->getType()->getScalarType()->isIntegerTy(1) ? r : f32_to_lowp(t, r);
  }
  bool fp = t.is_float();
  bool uns = t.is_uint() || t.code() == DataType::kBool;
  bool nsw = in_index_ && !fp && !uns;  // see index_expr
  switch (kind) {
    case ExprKind::kAdd: return fp ? b_.CreateFAdd(a, b) : b_.CreateAdd(a, b, "", false, nsw);
    case ExprKind::kSub: return fp ? b_.CreateFSub(a, b) : b_.CreateSub(a, b, "", false, nsw);
    case ExprKind::kMul: return fp ? b_.CreateFMul(a, b) : b_.CreateMul(a, b, "", false, nsw);
    case ExprKind::kDiv: return fp ? b_.CreateFDiv(a, b) : uns ? b_.CreateUDiv(a, b) : b_.CreateSDiv(a, b);
    case ExprKind::kFloorDiv:
    case ExprKind::kFloorMod: {
      if (fp) {
        llvm::Value* q = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b_.CreateFDiv(a, b));
        return kind == ExprKind::kFloorDiv ? q : b_.CreateFSub(a, b_.CreateFMul(q, b));
      }
      if (uns) return kind == ExprKind::kFloorDiv ? b_.CreateUDiv(a, b) : b_.CreateURem(a, b);
      llvm::Value* r = b_.CreateSRem(a, b);
      llvm::Value* zero = llvm::Constant::getNullValue(a->getType());
      // The truncated result is one too high when the remainder is non-zero and its sign
      // differs from the divisor's.
      llvm::Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, zero), b_.CreateICmpSLT(b_.CreateXor(r, b), zero));
      if (kind == ExprKind::kFloorDiv) return b_.CreateSub(b_.CreateSDiv(a, b), b_.CreateZExt(adjust, a->getType()));
      return b_.CreateAdd(r, b_.CreateSelect(adjust, b, zero));
    }
    case ExprKind::kMin:
    case ExprKind::kMax: {
      llvm::Value* lt = fp ? b_.CreateFCmpOLT(a, b) : uns ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
      return kind == ExprKind::kMin ? b_.CreateSelect(lt, a, b) : b_.CreateSelect(lt, b, a);
    }
    case ExprKind::kEQ: return fp ? b_.CreateFCmpOEQ(a, b) : b_.CreateICmpEQ(a, b);
    case ExprKind::kNE: return fp ? b_.CreateFCmpUNE(a, b) : b_.CreateICmpNE(a, b);
    case ExprKind::kLT: return fp ? b_.CreateFCmpOLT(a, b) : uns ? b_.CreateICmpULT(a, b) : b_.CreateICmpSLT(a, b);
    case ExprKind::kLE: return fp ? b_.CreateFCmpOLE(a, b) : uns ? b_.CreateICmpULE(a, b) : b_.CreateICmpSLE(a, b);
    case ExprKind::kGT: return fp ? b_.CreateFCmpOGT(a, b) : uns ? b_.CreateICmpUGT(a, b) : b_.CreateICmpSGT(a, b);
    case ExprKind::kGE: return fp ? b_.CreateFCmpOGE(a, b) : uns ? b_.CreateICmpUGE(a, b) : b_.CreateICmpSGE(a, b);
    case ExprKind::kAnd: return b_.CreateAnd(a, b);
    case ExprKind::kOr: return b_.CreateOr(a, b);
    default: break;
  }
  throw_error(ErrorKind::kInternal, "llvm codegen: not a binary kind: ", ir::expr_kind_name(kind));
}

llvm::Value* CodeGenLLVM::cast(DataType from, DataType to, llvm::Value* v) {
  if (from == to) return v;
  // Low-precision floats convert through float32 (exact for a widening; from float64 it rounds
  // twice, which can differ from one rounding only at exact ties of the narrow type).
  DataType f32 = ir::with_lanes(DataType::float32(), from.lanes());
  if (from.is_low_precision_float()) return cast(f32, to, lowp_to_f32(from, v));
  if (to.is_low_precision_float()) return f32_to_lowp(to, cast(from, f32, v));
  llvm::Type* ty = value_type(to);
  bool from_bool = from.code() == DataType::kBool;
  if (to.code() == DataType::kBool) {
    if (from.is_float()) return b_.CreateFCmpUNE(v, llvm::Constant::getNullValue(v->getType()));
    return b_.CreateICmpNE(v, llvm::Constant::getNullValue(v->getType()));
  }
  if (to.is_float()) {
    if (from.is_float()) return b_.CreateFPCast(v, ty);
    if (from.is_uint() || from_bool) return b_.CreateUIToFP(v, ty);
    return b_.CreateSIToFP(v, ty);
  }
  // to an integer type
  if (from.is_float() && to.is_sub_byte_int()) {
    // Truncate toward zero through int32, then wrap to the 4 / 2 bits (fptosi straight to i4
    // would be poison for anything out of range).
    llvm::Value* i = b_.CreateFPToSI(v, value_type(ir::with_lanes(DataType::int32(), to.lanes())));
    return b_.CreateTrunc(i, ty);
  }
  if (from.is_float()) return to.is_uint() ? b_.CreateFPToUI(v, ty) : b_.CreateFPToSI(v, ty);
  return b_.CreateIntCast(v, ty, !(from.is_uint() || from_bool));
}

llvm::Value* CodeGenLLVM::expr(const PrimExpr& e) {
  DataType t = e.dtype();
  switch (e.kind()) {
    case ExprKind::kIntImm: {
      auto* op = e.as<ir::IntImmNode>();
      return llvm::ConstantInt::get(value_type(t), static_cast<uint64_t>(op->value()), !t.is_uint());
    }
    case ExprKind::kFloatImm: {
      double v = e.as<ir::FloatImmNode>()->value();
      if (!t.is_low_precision_float()) return llvm::ConstantFP::get(value_type(t), v);
      DataType f = ir::with_lanes(DataType::float32(), t.lanes());
      return f32_to_lowp(t, llvm::ConstantFP::get(value_type(f), v));  // folded by the IRBuilder
    }
    case ExprKind::kStringImm:
      not_implemented_error("llvm codegen: ", func_name_, ": string immediate ", ir::to_string(e), " used as a value");
    case ExprKind::kVar: return lookup(e.as<ir::VarNode>());
#define ANVIL_EXPR_KIND(Name)
#define ANVIL_BINARY_EXPR(Name, factory, text, prec)                                    \
  case ExprKind::k##Name: {                                                             \
    auto* op = static_cast<const ir::Name##Node*>(e.get());                             \
    llvm::Value* a = expr(op->a());                                                     \
    llvm::Value* b = expr(op->b());                                                     \
    return binary(ExprKind::k##Name, op->a().dtype(), a, b);                            \
  }
#include "anvil/ir/expr_kinds.def"
#undef ANVIL_BINARY_EXPR
#undef ANVIL_EXPR_KIND
    case ExprKind::kNot: return b_.CreateNot(expr(e.as<ir::NotNode>()->a()));
    case ExprKind::kSelect: {
      auto* op = e.as<ir::SelectNode>();
      llvm::Value* c = expr(op->cond());
      llvm::Value* tv = expr(op->true_value());
      llvm::Value* fv = expr(op->false_value());
      return b_.CreateSelect(c, tv, fv);
    }
    case ExprKind::kCast: {
      auto* op = e.as<ir::CastNode>();
      return cast(op->value().dtype(), t, expr(op->value()));
    }
    case ExprKind::kRamp: {
      auto* op = e.as<ir::RampNode>();
      int lanes = op->lanes();
      llvm::Value* base = b_.CreateVectorSplat(static_cast<unsigned>(lanes), expr(op->base()));
      llvm::Value* stride = b_.CreateVectorSplat(static_cast<unsigned>(lanes), expr(op->stride()));
      std::vector<llvm::Constant*> steps;
      llvm::Type* et = value_type(op->base().dtype());
      for (int i = 0; i < lanes; ++i) steps.push_back(llvm::ConstantInt::get(et, static_cast<uint64_t>(i)));
      return b_.CreateAdd(base, b_.CreateMul(stride, llvm::ConstantVector::get(steps)));
    }
    case ExprKind::kBroadcast: {
      auto* op = e.as<ir::BroadcastNode>();
      return b_.CreateVectorSplat(static_cast<unsigned>(op->lanes()), expr(op->value()));
    }
    case ExprKind::kLet: {
      auto* op = e.as<ir::LetNode>();
      llvm::Value* v = expr(op->value());
      auto prev = vars_.find(op->var().get());
      llvm::Value* saved = prev == vars_.end() ? nullptr : prev->second;
      bind(op->var(), v);
      llvm::Value* r = expr(op->body());
      if (saved) bind(op->var(), saved); else unbind(op->var());
      return r;
    }
    case ExprKind::kCall: return call_math(e.as<ir::CallNode>());
    case ExprKind::kBufferLoad: return buffer_load(e.as<ir::BufferLoadNode>());
    default: break;
  }
  not_implemented_error("llvm codegen: ", func_name_, ": expression ", ir::to_string(e));
}

namespace {

// Strided vector loads up to this stride are a contiguous load and a shuffle (see buffer_load).
constexpr int64_t kMaxShuffledStride = 4;

std::optional<int64_t> const_stride(const PrimExpr& idx) {
  if (auto* r = idx.as<ir::RampNode>()) return ir::as_const_int(r->stride());
  return std::nullopt;
}

}  // namespace

llvm::Align CodeGenLLVM::access_align(const ir::Buffer& buf, const PrimExpr& index) const {
  int64_t elem_bytes = ir::element_of(buf->dtype()).bytes();
  auto it = data_align_.find(buf->data().get());
  int64_t base = it != data_align_.end() ? it->second : elem_bytes;
  if (base <= 1) return llvm::Align(1);
  // elem_bytes * index is a multiple of lowbit(elem_bytes) * (power of two dividing index).
  int64_t elem_low = elem_bytes & -elem_bytes;
  int64_t index_factor = index.defined() ? arith::power_of_two_factor(arith::modular_set(index, index_mod_), base) : 1;
  return llvm::Align(static_cast<uint64_t>(std::min(base, elem_low * index_factor)));
}

llvm::Value* CodeGenLLVM::index_expr(const PrimExpr& index) {
  bool saved = in_index_;
  in_index_ = true;
  llvm::Value* v = expr(index);
  in_index_ = saved;
  return v;
}

llvm::Value* CodeGenLLVM::buffer_load(const ir::BufferLoadNode* op) {
  const ir::Buffer& buf = op->buffer();
  if (buf.ndim() != 1)
    throw_error(ErrorKind::kInternal, "llvm codegen: ", func_name_, ": load of ", buf->name(), " is not flattened");
  llvm::Value* base = lookup(buf->data().get());
  DataType et = ir::element_of(buf->dtype());
  llvm::Type* mt = memory_type(et);
  int lanes = op->dtype().lanes();
  const PrimExpr& idx = op->indices()[0];
  llvm::Value* v = nullptr;
  if (lanes == 1) {
    v = b_.CreateAlignedLoad(mt, b_.CreateInBoundsGEP(mt, base, index_expr(idx)), access_align(buf, idx));
  } else if (const_stride(idx) == 1) {
    const PrimExpr& first = idx.as<ir::RampNode>()->base();
    llvm::Value* ptr = b_.CreateInBoundsGEP(mt, base, index_expr(first));
    v = b_.CreateAlignedLoad(llvm::FixedVectorType::get(mt, static_cast<unsigned>(lanes)), ptr, access_align(buf, first));
  } else if (auto* bc = idx.as<ir::BroadcastNode>()) {
    llvm::Value* s = b_.CreateAlignedLoad(mt, b_.CreateInBoundsGEP(mt, base, index_expr(bc->value())),
                                          access_align(buf, bc->value()));
    v = b_.CreateVectorSplat(static_cast<unsigned>(lanes), s);
  } else if (std::optional<int64_t> st = const_stride(idx);
             st && *st >= 2 && *st <= kMaxShuffledStride && et.bits() >= 8 && !et.is_sub_byte_int()) {
    // A small constant stride (a stride-2 convolution's taps): a load of lanes * stride
    // elements whose lanes past the last one read ((lanes - 1) * stride) are masked off, so no
    // byte beyond the elements the gather would read is touched, and a shuffle that picks every
    // stride-th element; a gather was several times slower, an odd-length load split badly.
    const PrimExpr& first = idx.as<ir::RampNode>()->base();
    const unsigned wide_n = static_cast<unsigned>(lanes * *st), span = static_cast<unsigned>((lanes - 1) * *st + 1);
    llvm::Value* ptr = b_.CreateInBoundsGEP(mt, base, index_expr(first));
    std::vector<llvm::Constant*> on(wide_n);
    for (unsigned i = 0; i < wide_n; ++i) on[i] = b_.getInt1(i < span);
    llvm::Value* wide = b_.CreateMaskedLoad(llvm::FixedVectorType::get(mt, wide_n), ptr, access_align(buf, first),
                                            llvm::ConstantVector::get(on));
    std::vector<int> pick(static_cast<size_t>(lanes));
    for (int i = 0; i < lanes; ++i) pick[static_cast<size_t>(i)] = static_cast<int>(i * *st);
    v = b_.CreateShuffleVector(wide, pick);
  } else {
    llvm::Value* ptrs = b_.CreateInBoundsGEP(mt, base, index_expr(idx));
    v = b_.CreateMaskedGather(llvm::FixedVectorType::get(mt, static_cast<unsigned>(lanes)), ptrs,
                              access_align(buf, PrimExpr()));
  }
  if (et.code() == DataType::kBool || et.is_sub_byte_int()) v = b_.CreateTrunc(v, value_type(op->dtype()));
  return v;
}

void CodeGenLLVM::buffer_store(const tir::BufferStoreNode* op) {
  const ir::Buffer& buf = op->buffer();
  if (buf.ndim() != 1)
    throw_error(ErrorKind::kInternal, "llvm codegen: ", func_name_, ": store to ", buf->name(), " is not flattened");
  llvm::Value* base = lookup(buf->data().get());
  DataType et = ir::element_of(buf->dtype());
  llvm::Type* mt = memory_type(et);
  llvm::Value* v = expr(op->value());
  int lanes = op->value().dtype().lanes();
  if (et.code() == DataType::kBool || et.is_sub_byte_int()) v = b_.CreateZExt(v, memory_type(op->value().dtype()));
  const PrimExpr& idx = op->indices()[0];
  if (lanes == 1 && idx.dtype().lanes() == 1) {
    b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(mt, base, index_expr(idx)), access_align(buf, idx));
  } else if (const_stride(idx) == 1) {
    const PrimExpr& first = idx.as<ir::RampNode>()->base();
    b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(mt, base, index_expr(first)), access_align(buf, first));
  } else {
    llvm::Value* ptrs = b_.CreateInBoundsGEP(mt, base, index_expr(idx));
    b_.CreateMaskedScatter(v, ptrs, access_align(buf, PrimExpr()));
  }
}

}  // namespace anvil::codegen
