// The SPIR-V code generator's statements: structured loops (OpLoopMerge, a continue block),
// selections (OpSelectionMerge), thread-bound loops read from the built-in ids, stores,
// allocations and barriers.
#include "anvil/base/error.h"
#include "anvil/codegen/spirv/codegen_spirv_impl.h"
#include "anvil/tir/workgroup_barrier.h"
#include "anvil/ir/printer.h"

namespace anvil::codegen::spirv {

void CodegenSpirv::stmt(const Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case tir::StmtKind::kFor: {
      auto* op = s.as<tir::ForNode>();
      if (op->for_kind() == tir::ForKind::kThreadBinding) return thread_loop(op);
      return for_loop(op);  // serial, unrolled, and parallel / vectorized ones serialised
    }
    case tir::StmtKind::kBufferStore: return store(s.as<tir::BufferStoreNode>());
    case tir::StmtKind::kAllocate: return allocate(s.as<tir::AllocateNode>());
    case tir::StmtKind::kLetStmt: {
      auto* op = s.as<tir::LetStmtNode>();
      values_[op->var().get()] = expr(op->value());
      return stmt(op->body());
    }
    case tir::StmtKind::kIfThenElse: return if_then_else(s.as<tir::IfThenElseNode>());
    case tir::StmtKind::kSeqStmt:
      for (const auto& x : s.as<tir::SeqStmtNode>()->seq()) stmt(x);
      return;
    case tir::StmtKind::kEvaluate: {
      const PrimExpr& v = s.as<tir::EvaluateNode>()->value();
      if (v.as<ir::IntImmNode>() || v.as<ir::FloatImmNode>() || v.as<ir::StringImmNode>()) return;
      expr(v);
      return;
    }
    case tir::StmtKind::kAttrStmt: {
      auto* op = s.as<tir::AttrStmtNode>();
      stmt(op->body());
      if (tir::is_workgroup_barrier(op)) barrier();
      return;
    }
    // A shader cannot report a failure: asserts are dropped (the Vulkan module checks the
    // arguments against the kernel's metadata before each dispatch).
    case tir::StmtKind::kAssertStmt: return stmt(s.as<tir::AssertStmtNode>()->body());
  }
}

// for (v = min; v < min + extent; ++v) body, v held in a Function variable.
void CodegenSpirv::for_loop(const tir::ForNode* op) {
  const DataType t = op->loop_var().dtype();
  const uint32_t ty = type_of(t), bt = b_.type_bool();
  uint32_t lo = expr(op->min());
  uint32_t hi = b_.value(spv::OpIAdd, ty, {lo, expr(op->extent())});
  uint32_t ptr = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, ty));
  b_.name(ptr, op->loop_var().name());
  b_.emit(spv::OpStore, {ptr, lo});
  var_ptrs_[op->loop_var().get()] = ptr;
  uint32_t header = b_.new_id(), body = b_.new_id(), cont = b_.new_id(), merge = b_.new_id();
  b_.emit(spv::OpBranch, {header});
  b_.label(header);
  uint32_t v = b_.value(spv::OpLoad, ty, {ptr});
  uint32_t c = b_.value(t.is_int() ? spv::OpSLessThan : spv::OpULessThan, bt, {v, hi});
  b_.emit(spv::OpLoopMerge, {merge, cont, static_cast<uint32_t>(spv::LoopControlMaskNone)});
  b_.emit(spv::OpBranchConditional, {c, body, merge});
  b_.label(body);
  stmt(op->body());
  b_.emit(spv::OpBranch, {cont});
  b_.label(cont);
  uint32_t v2 = b_.value(spv::OpLoad, ty, {ptr});
  b_.emit(spv::OpStore, {ptr, b_.value(spv::OpIAdd, ty, {v2, const_int(t, 1)})});
  b_.emit(spv::OpBranch, {header});
  b_.label(merge);
  var_ptrs_.erase(op->loop_var().get());
}

// The loop var is the invocation's id on the axis (+ min). A threadIdx loop shorter than the
// workgroup size on its axis runs under a guard.
void CodegenSpirv::thread_loop(const tir::ForNode* op) {
  const ThreadAxis& ax = axes_.at(op->thread_tag());
  const DataType t = op->loop_var().dtype();
  if (!ir::is_integer(t)) unsupported("a thread loop over a non-integer variable");
  uint32_t var = builtin(ax.is_block ? spv::BuiltInWorkgroupId : spv::BuiltInLocalInvocationId);
  uint32_t u32 = type_of(DataType::uint32());
  uint32_t vec = b_.value(spv::OpLoad, b_.type_vector(u32, 3), {var});
  uint32_t id = b_.value(spv::OpCompositeExtract, u32, {vec, static_cast<uint32_t>(ax.dim)});
  uint32_t v = convert(id, DataType::uint32(), t);
  if (!(ir::as_const_int(op->min()) == std::optional<int64_t>(0)))
    v = b_.value(spv::OpIAdd, type_of(t), {v, expr(op->min())});
  values_[op->loop_var().get()] = v;
  auto ext = ir::as_const_int(op->extent());
  if (!ax.is_block && ext && *ext < ax.size) {
    uint32_t c = b_.value(spv::OpULessThan, b_.type_bool(), {id, const_u32(static_cast<uint32_t>(*ext))});
    uint32_t then_b = b_.new_id(), merge = b_.new_id();
    b_.emit(spv::OpSelectionMerge, {merge, static_cast<uint32_t>(spv::SelectionControlMaskNone)});
    b_.emit(spv::OpBranchConditional, {c, then_b, merge});
    b_.label(then_b);
    stmt(op->body());
    b_.emit(spv::OpBranch, {merge});
    b_.label(merge);
    return;
  }
  stmt(op->body());
}

void CodegenSpirv::if_then_else(const tir::IfThenElseNode* op) {
  uint32_t c = expr(op->cond());
  uint32_t then_b = b_.new_id(), merge = b_.new_id();
  uint32_t else_b = op->else_case().defined() ? b_.new_id() : merge;
  b_.emit(spv::OpSelectionMerge, {merge, static_cast<uint32_t>(spv::SelectionControlMaskNone)});
  b_.emit(spv::OpBranchConditional, {c, then_b, else_b});
  b_.label(then_b);
  stmt(op->then_case());
  b_.emit(spv::OpBranch, {merge});
  if (op->else_case().defined()) {
    b_.label(else_b);
    stmt(op->else_case());
    b_.emit(spv::OpBranch, {merge});
  }
  b_.label(merge);
}

void CodegenSpirv::store(const tir::BufferStoreNode* op) {
  if (op->indices().size() != 1)
    unsupported("a " + std::to_string(op->indices().size()) + "-d store to '" + op->buffer()->name() +
                "' (storage_flatten should have made it 1-d)");
  if (op->value().dtype().lanes() != 1) unsupported("a vector store to '" + op->buffer()->name() + "'");
  const BufferVar& buf = buffer_of(op->buffer());
  uint32_t v = expr(op->value());
  if (buf.bool_as_u8) v = convert(convert(v, DataType::boolean(), DataType::uint32()), DataType::uint32(), DataType::uint8());
  uint32_t ptr = element_pointer(buf, op->indices()[0]);
  b_.emit(spv::OpStore, {ptr, v});
}

void CodegenSpirv::allocate(const tir::AllocateNode* op) {
  const std::string& scope = op->scope();
  const std::string& name = op->buffer_var().name();
  if (scope != "local" && scope != "shared")
    unsupported("allocation '" + name + "' in scope '" + scope + "' (only 'local' and 'shared')");
  std::optional<int64_t> n = tir::constant_allocation_elements(*op);
  if (!n) unsupported("allocation '" + name + "' of non-constant size");
  if (*n > 0x7FFFFFFF) unsupported("allocation '" + name + "' of " + std::to_string(*n) + " elements");
  int64_t count = std::max<int64_t>(*n, 1);
  BufferVar bv;
  bv.elem = op->dtype();
  bv.name = name;
  bv.elem_type = type_of(op->dtype(), Use::kArith);
  uint32_t arr = b_.type_array(bv.elem_type, const_u32(static_cast<uint32_t>(count)));
  if (scope == "local") {
    bv.storage = spv::StorageClassFunction;
    bv.var = b_.function_variable(b_.type_pointer(spv::StorageClassFunction, arr));
  } else {
    bv.storage = spv::StorageClassWorkgroup;
    bv.var = b_.global_variable(b_.type_pointer(spv::StorageClassWorkgroup, arr), spv::StorageClassWorkgroup);
    shared_bytes_ += static_cast<uint64_t>(count) * op->dtype().bytes();
  }
  b_.name(bv.var, name);
  buffers_[op->buffer_var().get()] = bv;
  stmt(op->body());
  buffers_.erase(op->buffer_var().get());
}

// All invocations of the workgroup meet; workgroup memory written before is visible after.
void CodegenSpirv::barrier() {
  const uint32_t workgroup = const_u32(spv::ScopeWorkgroup);
  const uint32_t semantics =
      const_u32(spv::MemorySemanticsAcquireReleaseMask | spv::MemorySemanticsWorkgroupMemoryMask);
  b_.emit(spv::OpControlBarrier, {workgroup, workgroup, semantics});
}

}  // namespace anvil::codegen::spirv
