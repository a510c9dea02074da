// Internal to the TIR -> LLVM code generator (codegen_llvm*.cc): the translator class. Not a
// public header; build_llvm (codegen_llvm.h) is the interface.
//
// Files: codegen_llvm.cc (driver, kernel entry: argument unpacking and checks),
// codegen_llvm_expr.cc (expressions, loads), codegen_llvm_stmt.cc (statements, loops, parallel
// outlining, allocation), codegen_llvm_math.cc (intrinsics, vectorizable exp/tanh/erf),
// codegen_llvm_lowp.cc (bfloat16 / float8 / float4 conversions through float32).
#pragma once

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/arith/modular.h"
#include "anvil/codegen/llvm/kernel_abi.h"
#include "anvil/codegen/llvm/llvm_target.h"
#include "anvil/tir/prim_func.h"
#include "anvil/tir/stmt.h"

namespace anvil::codegen {

// Base alignment (bytes) of the memory of an Allocate: stack arrays are created with this
// alignment (emit_allocate) and workspace_alloc returns kAllocAlignment (64) aligned memory.
inline constexpr int64_t kAllocateAlignment = 64;

class CodeGenLLVM {
 public:
  CodeGenLLVM(llvm::Module& module, const LLVMTargetSpec& spec);
  // Adds `__anvil_fn_<name>` for f (f already flattened and parallel-lowered).
  void add_function(const tir::PrimFunc& f, const std::string& name);

  // ---- types and constants
  // bool -> i1, int4 -> i4, bfloat16 / float8_* / float4 -> their raw bits (i16 / i8 / i8)
  llvm::Type* value_type(ir::DataType t);   // (lanes: vectors)
  llvm::Type* memory_type(ir::DataType t);  // bool, int4, uint4, int2, uint2 -> i8
  llvm::Value* float_const(llvm::Type* t, double v) const;  // splat for vector types
  llvm::Value* int_const(llvm::Type* t, int64_t v) const;

  // ---- expressions (codegen_llvm_expr.cc)
  llvm::Value* expr(const ir::PrimExpr& e);
  llvm::Value* cast(ir::DataType from, ir::DataType to, llvm::Value* v);
  // ---- low-precision floats (codegen_llvm_lowp.cc): raw bits <-> float32, lanes of the dtype
  llvm::Value* lowp_to_f32(ir::DataType from, llvm::Value* bits);
  llvm::Value* f32_to_lowp(ir::DataType to, llvm::Value* x);
  llvm::Value* buffer_load(const ir::BufferLoadNode* op);
  void buffer_store(const tir::BufferStoreNode* op);

  // ---- math (codegen_llvm_math.cc)
  llvm::Value* call_math(const ir::CallNode* op);
  llvm::Value* exp_f32(llvm::Value* x);
  llvm::Value* tanh_f32(llvm::Value* x);
  llvm::Value* erf_f32(llvm::Value* x);

  // ---- statements (codegen_llvm_stmt.cc)
  void stmt(const tir::Stmt& s);

  // ---- errors and runtime calls (codegen_llvm.cc)
  // Formats with snprintf (fmt and args as for C; %s args are i8* strings, %lld i64, %d i32),
  // calls error_set(kind, message) and returns -1 from the current function.
  void emit_error_return(int kind, const std::string& fmt, const std::vector<llvm::Value*>& args);
  // Branch to an error block when ok is false; continues in a new block.
  void check_or_fail(llvm::Value* ok, int kind, const std::string& fmt, const std::vector<llvm::Value*>& args);
  // Returns status from the current function when it is non-zero (freeing live_workspace_).
  void return_if_nonzero(llvm::Value* status);
  // Calls workspace_free on live_workspace_, innermost first (before an early return).
  void free_live_workspace();
  llvm::Value* runtime_api_fn(unsigned field);  // loads the function pointer from the table
  llvm::Value* to_i64(llvm::Value* v, ir::DataType t);

  // A function of `kind` whose arguments are `vars` (handles get noalias); its vars_ map holds
  // them. Used for the kernel's compute function and for parallel task bodies.
  llvm::Function* make_body_function(const std::string& name, const std::vector<ir::Var>& vars,
                                     const std::vector<llvm::Type*>& extra_args);

  // Scoped var binding.
  void bind(const ir::Var& v, llvm::Value* value) { vars_[v.get()] = value; }
  void unbind(const ir::Var& v) { vars_.erase(v.get()); }
  llvm::Value* lookup(const ir::VarNode* v) const;
  llvm::AllocaInst* entry_alloca(llvm::Type* t, llvm::Value* count, unsigned align, const std::string& name);

  llvm::LLVMContext& ctx_;
  llvm::Module& mod_;
  llvm::IRBuilder<> b_;
  KernelAbiTypes abi_;
  llvm::GlobalVariable* api_global_ = nullptr;
  LLVMTargetSpec spec_;
  bool fast_math_ = false;
  int num_cores_ = 0;

  // Per function.
  std::string func_name_;
  llvm::Function* fn_ = nullptr;
  std::unordered_map<const ir::VarNode*, llvm::Value*> vars_;
  int parallel_depth_ = 0;
  int num_outlined_ = 0;
  llvm::Function* message_fn_ = nullptr;  // the function message_buf_ belongs to
  llvm::AllocaInst* message_buf_ = nullptr;
  // Alignment in bytes known for the address each buffer data var holds: Allocate vars
  // kAllocateAlignment, tensor parameters what the entry checked (their element size, see
  // add_function). Vars not in the map are assumed aligned to the accessed element, as before.
  std::unordered_map<const ir::VarNode*, int64_t> data_align_;
  // Modular sets of the integer let vars in scope (LetStmt), for access alignment.
  arith::ModularVarMap index_mod_;
  // Workspace allocations (workspace_alloc results) of the current function enclosing the
  // statement being emitted, outermost first: a failing AssertStmt frees them before returning.
  std::vector<llvm::Value*> live_workspace_;
  // Alignment of an access to buf at element index (scalar; for a stride-1 Ramp its base): the
  // largest power of two dividing the buffer's base alignment and elem_bytes * every value of index.
  llvm::Align access_align(const ir::Buffer& buf, const ir::PrimExpr& index) const;

 private:
  void emit_for(const tir::ForNode* op);
  void emit_parallel(const tir::ForNode* op);
  void emit_allocate(const tir::AllocateNode* op);
  void emit_assert(const tir::AssertStmtNode* op);
  void emit_loop(const ir::Var& var, llvm::Value* begin, llvm::Value* end, const tir::Stmt& body,
                 const char* loop_hint);
  llvm::Value* binary(ir::ExprKind kind, ir::DataType t, llvm::Value* a, llvm::Value* b);
  // A buffer index: signed +, -, * inside it carry nsw (an index whose arithmetic overflows is
  // out of bounds, so LLVM may assume it does not; that lets it fold the int32 -> int64
  // extension into the address and strength-reduce the index across loop iterations).
  llvm::Value* index_expr(const ir::PrimExpr& index);
  bool in_index_ = false;
  llvm::Value* math_unary_f32(ir::CallOp op, llvm::Value* x);
  llvm::Value* per_lane_libm(const char* name, llvm::Value* x, ir::DataType t);
  llvm::Value* libm_unary(const char* name, llvm::Value* x, ir::DataType t);
  llvm::Value* float_class(ir::CallOp op, llvm::Value* x, ir::DataType t);
  llvm::Value* call_bitwise(ir::CallOp op, const std::vector<llvm::Value*>& args, ir::DataType t);
};

// Names of AnvilValue kinds, for messages ("int", "tensor", ...).
const char* value_kind_name(int kind);

}  // namespace anvil::codegen
