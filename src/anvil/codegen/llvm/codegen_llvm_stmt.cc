// TIR -> LLVM: statements. Loops are bottom-tested with a guard; unrolled loops carry
// llvm.loop.unroll.full, leftover vectorized loops llvm.loop.vectorize.enable (both still
// correct as serial loops). A parallel loop (lower_parallel.h) is outlined: the values its body
// uses go into a closure struct on the stack, an AnvilParallelLambda loads them and calls a task
// body function (pointers as noalias arguments) on its static chunk of [0, extent), and the
// parent calls parallel_launch through the runtime table, returning its status when non-zero.
// Allocate: constant sizes up to tir::kMaxStackAllocBytes (64 KiB, tir::stack_allocation_elements)
// are stack memory (64-byte aligned, in the entry block); others come from workspace_alloc (a null
// result is an error naming the buffer) and go back through workspace_free after the body.
// AssertStmt: a failing condition formats the message (snprintf, %lld per message argument),
// frees the enclosing workspace allocations, sets a ValueError and returns -1 — from a parallel
// task body too, whose failure parallel_launch hands back with the message.
#include <llvm/IR/Constants.h>
#include <llvm/IR/MDBuilder.h>

#include <set>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/codegen_llvm_impl.h"
#include "anvil/codegen/parallel_tasks.h"
#include "anvil/ir/printer.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/tir/stmt_functor.h"
#include "anvil/tir/workgroup_barrier.h"

namespace anvil::codegen {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;
using tir::StmtKind;

void CodeGenLLVM::stmt(const tir::Stmt& s) {
  if (!s.defined()) return;
  switch (s.kind()) {
    case StmtKind::kFor: {
      auto* op = s.as<tir::ForNode>();
      if (op->for_kind() == tir::ForKind::kThreadBinding)
        not_implemented_error("llvm codegen: ", func_name_, ": thread-bound loop over ", op->loop_var().name(),
                              " (", op->thread_tag(), ") on a CPU target");
      if (op->for_kind() == tir::ForKind::kParallel && parallel_depth_ == 0) {
        emit_parallel(op);
      } else {
        emit_for(op);
      }
      return;
    }
    case StmtKind::kBufferStore: buffer_store(s.as<tir::BufferStoreNode>()); return;
    case StmtKind::kAllocate: {
      // Stack arrays and workspace memory are both kAllocateAlignment aligned (access_align).
      auto* op = s.as<tir::AllocateNode>();
      data_align_[op->buffer_var().get()] = kAllocateAlignment;
      emit_allocate(op);
      return;
    }
    case StmtKind::kLetStmt: {
      auto* op = s.as<tir::LetStmtNode>();
      bind(op->var(), expr(op->value()));
      index_mod_[op->var().get()] = arith::modular_set(op->value(), index_mod_);  // for access_align
      stmt(op->body());
      index_mod_.erase(op->var().get());
      unbind(op->var());
      return;
    }
    case StmtKind::kIfThenElse: {
      auto* op = s.as<tir::IfThenElseNode>();
      llvm::Value* c = expr(op->cond());
      auto* then_bb = llvm::BasicBlock::Create(ctx_, "then", fn_);
      auto* end_bb = llvm::BasicBlock::Create(ctx_, "endif", fn_);
      auto* else_bb = op->else_case().defined() ? llvm::BasicBlock::Create(ctx_, "else", fn_) : end_bb;
      b_.CreateCondBr(c, then_bb, else_bb);
      b_.SetInsertPoint(then_bb);
      stmt(op->then_case());
      b_.CreateBr(end_bb);
      if (op->else_case().defined()) {
        b_.SetInsertPoint(else_bb);
        stmt(op->else_case());
        b_.CreateBr(end_bb);
      }
      b_.SetInsertPoint(end_bb);
      return;
    }
    case StmtKind::kSeqStmt:
      for (const tir::Stmt& x : s.as<tir::SeqStmtNode>()->seq()) stmt(x);
      return;
    case StmtKind::kEvaluate: {
      const PrimExpr& v = s.as<tir::EvaluateNode>()->value();
      if (v.as<ir::IntImmNode>() || v.as<ir::FloatImmNode>() || v.as<ir::StringImmNode>()) return;
      expr(v);
      return;
    }
    case StmtKind::kAttrStmt:
      if (tir::is_workgroup_barrier(s.as<tir::AttrStmtNode>()))
        not_implemented_error("llvm codegen: ", func_name_, ": a workgroup barrier needs a GPU target");
      stmt(s.as<tir::AttrStmtNode>()->body());
      return;
    case StmtKind::kAssertStmt: emit_assert(s.as<tir::AssertStmtNode>()); return;
  }
}

void CodeGenLLVM::emit_assert(const tir::AssertStmtNode* op) {
  llvm::Value* ok = expr(op->condition());
  auto* fail = llvm::BasicBlock::Create(ctx_, "assert_fail", fn_);
  auto* cont = llvm::BasicBlock::Create(ctx_, "assert_ok", fn_);
  llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(ok, cont, fail, md.createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(fail);
  // The message: its literal pieces (% escaped for snprintf) around %lld for each argument.
  std::vector<std::string> pieces = tir::assert_message_pieces(op->message());
  std::string fmt;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i) fmt += "%lld";
    for (char c : pieces[i]) fmt += c == '%' ? std::string("%%") : std::string(1, c);
  }
  std::vector<llvm::Value*> args;
  for (const PrimExpr& a : op->message_args()) args.push_back(to_i64(expr(a), a.dtype()));
  free_live_workspace();  // the enclosing allocations' memory goes back before the early return
  emit_error_return(kAnvilErrorValue, fmt, args);
  b_.SetInsertPoint(cont);
  stmt(op->body());
}

void CodeGenLLVM::emit_loop(const Var& var, llvm::Value* begin, llvm::Value* end, const tir::Stmt& body,
                            const char* loop_hint) {
  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* loop = llvm::BasicBlock::Create(ctx_, "for_body_" + var.name(), fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, "for_end_" + var.name(), fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, exit);
  b_.SetInsertPoint(loop);
  llvm::PHINode* i = b_.CreatePHI(begin->getType(), 2, var.name());
  i->addIncoming(begin, pre);
  bind(var, i);
  stmt(body);
  unbind(var);
  // i < end, so i + 1 cannot overflow: nsw lets LLVM widen the induction variable.
  llvm::Value* next = b_.CreateNSWAdd(i, llvm::ConstantInt::get(begin->getType(), 1), var.name() + "_next");
  i->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* br = b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);
  if (loop_hint) {
    llvm::Metadata* hint = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, loop_hint)});
    if (std::string(loop_hint) == "llvm.loop.vectorize.enable")
      hint = llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, loop_hint), llvm::ConstantAsMetadata::get(b_.getTrue())});
    llvm::MDNode* self = llvm::MDNode::getDistinct(ctx_, {nullptr, hint});
    self->replaceOperandWith(0, self);
    br->setMetadata(llvm::LLVMContext::MD_loop, self);
  }
  b_.SetInsertPoint(exit);
}

void CodeGenLLVM::emit_for(const tir::ForNode* op) {
  llvm::Value* begin = expr(op->min());
  llvm::Value* end = b_.CreateAdd(begin, expr(op->extent()));
  const char* hint = nullptr;
  if (op->for_kind() == tir::ForKind::kUnrolled) hint = "llvm.loop.unroll.full";
  if (op->for_kind() == tir::ForKind::kVectorized) hint = "llvm.loop.vectorize.enable";
  emit_loop(op->loop_var(), begin, end, op->body(), hint);
}

void CodeGenLLVM::emit_parallel(const tir::ForNode* op) {
  // Values the body needs from outside: vars bound now (uses and buffer data vars).
  std::vector<Var> captured;
  std::set<const ir::VarNode*> seen;
  auto capture = [&](const ir::VarNode* v) {
    if (v == op->loop_var().get() || !vars_.count(v) || !seen.insert(v).second) return;
    captured.emplace_back(v);
  };
  tir::post_order_visit(
      op->body(),
      [&](const ir::PrimExprNode* e) {
        if (e->kind() == ir::ExprKind::kVar) capture(static_cast<const ir::VarNode*>(e));
        if (e->kind() == ir::ExprKind::kBufferLoad) capture(static_cast<const ir::BufferLoadNode*>(e)->buffer()->data().get());
      },
      [&](const tir::StmtNode* s) {
        if (s->kind() == StmtKind::kBufferStore) capture(static_cast<const tir::BufferStoreNode*>(s)->buffer()->data().get());
      });
  DataType it = op->loop_var().dtype();
  llvm::Type* ity = value_type(it);
  llvm::Value* lo = expr(op->min());
  llvm::Value* extent = expr(op->extent());

  std::vector<llvm::Type*> fields;
  for (const Var& v : captured) fields.push_back(value_type(v.dtype()));
  fields.push_back(ity);  // min
  fields.push_back(ity);  // extent
  llvm::StructType* closure_type = llvm::StructType::get(ctx_, fields);
  llvm::AllocaInst* closure = entry_alloca(closure_type, nullptr, 8, "closure");
  for (size_t k = 0; k < captured.size(); ++k)
    b_.CreateStore(lookup(captured[k].get()), b_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(k)));
  b_.CreateStore(lo, b_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(captured.size())));
  b_.CreateStore(extent, b_.CreateStructGEP(closure_type, closure, static_cast<unsigned>(captured.size() + 1)));

  std::string base_name = "__anvil_" + func_name_ + "_parallel_" + std::to_string(num_outlined_++);
  // The task body: (captured..., begin, end) with the loop over [begin, end).
  llvm::Function* body_fn = make_body_function(base_name + "_body", captured, {ity, ity, ity});
  // The lambda: unpacks the closure, computes the chunk, calls the body.
  auto* lambda = llvm::Function::Create(abi_.parallel_lambda, llvm::Function::InternalLinkage, base_name, mod_);
  lambda->addFnAttr(llvm::Attribute::NoUnwind);

  // Save the parent's state (the task body frees none of the parent's workspace memory).
  llvm::Function* parent_fn = fn_;
  llvm::BasicBlock* parent_bb = b_.GetInsertBlock();
  auto parent_vars = vars_;
  auto parent_workspace = std::move(live_workspace_);
  live_workspace_.clear();

  {
    fn_ = lambda;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", lambda));
    llvm::Value* task = lambda->getArg(0);
    llvm::Value* env = lambda->getArg(1);
    llvm::Value* cl = lambda->getArg(2);
    std::vector<llvm::Value*> call_args;
    for (size_t k = 0; k < fields.size(); ++k)
      call_args.push_back(b_.CreateLoad(fields[k], b_.CreateStructGEP(closure_type, cl, static_cast<unsigned>(k))));
    llvm::Value* ext = call_args.back();
    call_args.pop_back();
    llvm::Value* num_task = b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(abi_.parallel_env, env, kEnvNumTask));
    llvm::Value* nt = b_.CreateIntCast(num_task, ity, true);
    llvm::Value* tid = b_.CreateIntCast(task, ity, true);
    llvm::Value* one = llvm::ConstantInt::get(ity, 1);
    llvm::Value* chunk = b_.CreateSDiv(b_.CreateSub(b_.CreateAdd(ext, nt), one), nt);
    llvm::Value* begin = b_.CreateMul(tid, chunk);
    llvm::Value* end = b_.CreateAdd(begin, chunk);
    end = b_.CreateSelect(b_.CreateICmpSLT(end, ext), end, ext);
    call_args.push_back(begin);
    call_args.push_back(end);
    b_.CreateRet(b_.CreateCall(body_fn, call_args));
  }
  {
    fn_ = body_fn;
    vars_.clear();
    for (size_t k = 0; k < captured.size(); ++k) bind(captured[k], body_fn->getArg(static_cast<unsigned>(k)));
    llvm::Value* min = body_fn->getArg(static_cast<unsigned>(captured.size()));
    llvm::Value* begin = body_fn->getArg(static_cast<unsigned>(captured.size() + 1));
    llvm::Value* end = body_fn->getArg(static_cast<unsigned>(captured.size() + 2));
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", body_fn));
    // for i in [begin, end): loop_var = min + i
    Var i(op->loop_var().name() + "_chunk", it);
    ++parallel_depth_;
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* loop = llvm::BasicBlock::Create(ctx_, "task_body", body_fn);
    auto* exit = llvm::BasicBlock::Create(ctx_, "task_end", body_fn);
    b_.CreateCondBr(b_.CreateICmpSLT(begin, end), loop, exit);
    b_.SetInsertPoint(loop);
    llvm::PHINode* phi = b_.CreatePHI(ity, 2, op->loop_var().name());
    phi->addIncoming(begin, pre);
    bind(op->loop_var(), b_.CreateAdd(min, phi));
    stmt(op->body());
    unbind(op->loop_var());
    llvm::Value* next = b_.CreateAdd(phi, llvm::ConstantInt::get(ity, 1));
    phi->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);
    b_.SetInsertPoint(exit);
    b_.CreateRet(b_.getInt32(0));
    --parallel_depth_;
  }

  fn_ = parent_fn;
  vars_ = std::move(parent_vars);
  live_workspace_ = std::move(parent_workspace);
  b_.SetInsertPoint(parent_bb);
  llvm::Value* launch = runtime_api_fn(kApiParallelLaunch);
  // Tasks: parallel_tasks.h.
  llvm::Value* num_task = b_.getInt32(static_cast<uint32_t>(num_cores_));
  if (num_cores_ <= 0) {
    llvm::Value* few = b_.CreateICmpSLE(extent, llvm::ConstantInt::get(ity, kMaxTaskPerIteration));
    num_task = b_.CreateSelect(few, b_.CreateIntCast(extent, b_.getInt32Ty(), true), b_.getInt32(0));
  }
  llvm::Value* status = b_.CreateCall(abi_.parallel_launch, launch, {lambda, closure, num_task});
  return_if_nonzero(status);
}

void CodeGenLLVM::emit_allocate(const tir::AllocateNode* op) {
  DataType et = ir::element_of(op->dtype());
  llvm::Type* mt = memory_type(et);
  int64_t elem_bytes = et.bytes();
  const Var& var = op->buffer_var();
  if (std::optional<int64_t> n = tir::stack_allocation_elements(*op)) {
    llvm::AllocaInst* a = entry_alloca(mt, b_.getInt64(static_cast<uint64_t>(*n)), 64, var.name());
    bind(var, a);
    stmt(op->body());
    unbind(var);
    return;
  }
  // bytes = prod(extents) * elem_bytes, refusing negative extents and int64 overflow.
  llvm::Value* bytes = b_.getInt64(static_cast<uint64_t>(elem_bytes));
  llvm::Value* size_ok = b_.getTrue();
  for (const PrimExpr& e : op->extents()) {
    llvm::Value* v = to_i64(expr(e), e.dtype());
    size_ok = b_.CreateAnd(size_ok, b_.CreateICmpSGE(v, b_.getInt64(0)));
    llvm::Value* r = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, bytes, v);
    bytes = b_.CreateExtractValue(r, 0);
    size_ok = b_.CreateAnd(size_ok, b_.CreateNot(b_.CreateExtractValue(r, 1)));
  }
  std::string vname;
  for (char c : var.name()) vname += c == '%' ? std::string("%%") : std::string(1, c);
  check_or_fail(size_ok, kAnvilErrorValue, func_name_ + ": allocation " + vname + " has a negative or too large size", {});
  llvm::Value* alloc = runtime_api_fn(kApiWorkspaceAlloc);
  llvm::Value* ptr = b_.CreateCall(abi_.workspace_alloc, alloc, {b_.getInt32(kDLCPU), b_.getInt32(0), bytes}, var.name());
  check_or_fail(b_.CreateIsNotNull(ptr), kAnvilErrorRuntime,
                func_name_ + ": workspace allocation of %lld bytes for " + vname + " failed", {bytes});
  bind(var, ptr);
  live_workspace_.push_back(ptr);
  stmt(op->body());
  live_workspace_.pop_back();
  unbind(var);
  llvm::Value* free_fn = runtime_api_fn(kApiWorkspaceFree);
  b_.CreateCall(abi_.workspace_free, free_fn, {b_.getInt32(kDLCPU), b_.getInt32(0), ptr});
}

}  // namespace anvil::codegen
