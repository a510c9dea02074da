// TIR -> LLVM: the driver (build_llvm) and each kernel's entry — unpacking the AnvilValue
// arguments, checking tensors against the buffers (device, rank, dtype, shape, strides, offset),
// binding symbolic shape vars, and calling the compute function. See codegen_llvm.h.
#include "anvil/codegen/llvm/codegen_llvm.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/MDBuilder.h>

#include <algorithm>
#include <set>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/codegen_llvm_impl.h"
#include "anvil/codegen/llvm/llvm_init.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/ir/minifloat.h"
#include "anvil/ir/printer.h"
#include "anvil/runtime/c_abi.h"
#include "anvil/tir/passes/lower_parallel.h"
#include "anvil/tir/passes/storage_flatten.h"

namespace anvil::codegen {

using ir::DataType;
using ir::PrimExpr;
using ir::Var;

namespace {

// Escapes % for use inside a printf format.
std::string esc(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

std::string dtype_text(DataType t) { return ir::dtype_name(t); }

const char* kKindNames[] = {"null",   "int",   "float",  "bool",  "handle", "device", "dtype",
                            "string", "bytes", "shape",  "tensor", "function", "unknown"};

struct TensorArg {
  tir::Buffer buffer;
  int index = 0;
  std::string label;  // "argument 0 (A)"
  llvm::Value* data = nullptr;
  llvm::Value* byte_offset = nullptr;
  llvm::Value* strides = nullptr;  // int64_t* or null
  std::vector<llvm::Value*> dims;  // i64
};

}  // namespace

const char* value_kind_name(int kind) { return kind >= 0 && kind < 12 ? kKindNames[kind] : "unknown"; }

CodeGenLLVM::CodeGenLLVM(llvm::Module& module, const LLVMTargetSpec& spec)
    : ctx_(module.getContext()), mod_(module), b_(module.getContext()), abi_(kernel_abi_types(module.getContext())),
      spec_(spec) {
  api_global_ = get_or_create_runtime_api_global(module);
  fast_math_ = spec.fast_math;
  num_cores_ = spec.num_cores;
  if (fast_math_) b_.setFastMathFlags(llvm::FastMathFlags::getFast());
}

llvm::Type* CodeGenLLVM::value_type(DataType t) {
  llvm::Type* e = nullptr;
  if (t.code() == DataType::kBool) {
    e = b_.getInt1Ty();
  } else if (ir::is_handle(t)) {
    e = b_.getPtrTy();
  } else if (t.is_low_precision_float()) {
    // LLVM 16 lowers bfloat arithmetic to calls of __truncsfbf2, which this toolchain's libgcc
    // lacks (GCC 13+), and has no float8: keep the raw bits (codegen_llvm_lowp.cc).
    if (!ir::minifloat_format(ir::element_of(t)))
      not_implemented_error("llvm codegen: ", func_name_, ": unsupported dtype ", dtype_text(t));
    e = b_.getIntNTy(static_cast<unsigned>(t.storage_bits()));
  } else if (t.is_float()) {
    switch (t.bits()) {
      case 16: e = b_.getHalfTy(); break;
      case 32: e = b_.getFloatTy(); break;
      case 64: e = b_.getDoubleTy(); break;
      default: not_implemented_error("llvm codegen: ", func_name_, ": unsupported dtype ", dtype_text(t));
    }
  } else if (t.is_int() || t.is_uint()) {
    e = b_.getIntNTy(t.bits());
  } else {
    not_implemented_error("llvm codegen: ", func_name_, ": unsupported dtype ", dtype_text(t));
  }
  return t.lanes() > 1 ? llvm::FixedVectorType::get(e, t.lanes()) : e;
}

llvm::Type* CodeGenLLVM::memory_type(DataType t) {
  if (t.code() == DataType::kBool || t.is_sub_byte_int()) {
    llvm::Type* e = b_.getInt8Ty();
    return t.lanes() > 1 ? llvm::FixedVectorType::get(e, t.lanes()) : e;
  }
  return value_type(t);
}

llvm::Value* CodeGenLLVM::float_const(llvm::Type* t, double v) const { return llvm::ConstantFP::get(t, v); }
llvm::Value* CodeGenLLVM::int_const(llvm::Type* t, int64_t v) const {
  return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), true);
}

llvm::Value* CodeGenLLVM::lookup(const ir::VarNode* v) const {
  auto it = vars_.find(v);
  if (it == vars_.end())
    throw_error(ErrorKind::kInternal, "llvm codegen: ", func_name_, ": variable '", v->name(), "' is used outside its scope");
  return it->second;
}

llvm::AllocaInst* CodeGenLLVM::entry_alloca(llvm::Type* t, llvm::Value* count, unsigned align, const std::string& name) {
  llvm::BasicBlock& entry = fn_->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  llvm::AllocaInst* a = eb.CreateAlloca(t, count, name);
  a->setAlignment(llvm::Align(align));
  return a;
}

llvm::Value* CodeGenLLVM::to_i64(llvm::Value* v, DataType t) {
  if (v->getType()->isIntegerTy(64)) return v;
  if (t.is_uint() || t.code() == DataType::kBool) return b_.CreateZExt(v, b_.getInt64Ty());
  return b_.CreateSExt(v, b_.getInt64Ty());
}

llvm::Value* CodeGenLLVM::runtime_api_fn(unsigned field) {
  llvm::Value* api = b_.CreateLoad(b_.getPtrTy(), api_global_, "api");
  return b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(abi_.runtime_api, api, field));
}

void CodeGenLLVM::emit_error_return(int kind, const std::string& fmt, const std::vector<llvm::Value*>& args) {
  constexpr uint64_t kMessageBytes = 512;
  if (message_fn_ != fn_) {
    message_buf_ = entry_alloca(b_.getInt8Ty(), b_.getInt64(kMessageBytes), 1, "message");
    message_fn_ = fn_;
  }
  llvm::AllocaInst* buf = message_buf_;
  llvm::FunctionType* snprintf_type =
      llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}, true);
  llvm::FunctionCallee snprintf_fn = mod_.getOrInsertFunction("snprintf", snprintf_type);
  std::vector<llvm::Value*> call_args = {buf, b_.getInt64(kMessageBytes), b_.CreateGlobalStringPtr(fmt, "fmt")};
  call_args.insert(call_args.end(), args.begin(), args.end());
  b_.CreateCall(snprintf_fn, call_args);
  llvm::Value* error_set = runtime_api_fn(kApiErrorSet);
  b_.CreateCall(abi_.error_set, error_set, {b_.getInt32(kind), buf});
  b_.CreateRet(b_.getInt32(-1));
}

void CodeGenLLVM::check_or_fail(llvm::Value* ok, int kind, const std::string& fmt, const std::vector<llvm::Value*>& args) {
  auto* fail = llvm::BasicBlock::Create(ctx_, "arg_fail", fn_);
  auto* cont = llvm::BasicBlock::Create(ctx_, "arg_ok", fn_);
  llvm::MDBuilder md(ctx_);
  b_.CreateCondBr(ok, cont, fail, md.createBranchWeights(1 << 20, 1));
  b_.SetInsertPoint(fail);
  emit_error_return(kind, fmt, args);
  b_.SetInsertPoint(cont);
}

void CodeGenLLVM::free_live_workspace() {
  for (auto it = live_workspace_.rbegin(); it != live_workspace_.rend(); ++it)
    b_.CreateCall(abi_.workspace_free, runtime_api_fn(kApiWorkspaceFree), {b_.getInt32(kDLCPU), b_.getInt32(0), *it});
}

void CodeGenLLVM::return_if_nonzero(llvm::Value* status) {
  auto* fail = llvm::BasicBlock::Create(ctx_, "status_fail", fn_);
  auto* cont = llvm::BasicBlock::Create(ctx_, "status_ok", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(status, b_.getInt32(0)), cont, fail);
  b_.SetInsertPoint(fail);
  free_live_workspace();
  b_.CreateRet(status);
  b_.SetInsertPoint(cont);
}

llvm::Function* CodeGenLLVM::make_body_function(const std::string& name, const std::vector<Var>& vars,
                                                const std::vector<llvm::Type*>& extra_args) {
  std::vector<llvm::Type*> types;
  for (const Var& v : vars) types.push_back(value_type(v.dtype()));
  types.insert(types.end(), extra_args.begin(), extra_args.end());
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), types, false);
  auto* f = llvm::Function::Create(type, llvm::Function::InternalLinkage, name, mod_);
  for (size_t i = 0; i < vars.size(); ++i) {
    llvm::Argument* a = f->getArg(static_cast<unsigned>(i));
    a->setName(vars[i].name());
    if (ir::is_handle(vars[i].dtype())) {
      a->addAttr(llvm::Attribute::NoAlias);
      // The alignment known for a buffer's memory (checked at the entry, or an Allocate's).
      auto it = data_align_.find(vars[i].get());
      if (it != data_align_.end() && it->second > 1)
        a->addAttr(llvm::Attribute::getWithAlignment(ctx_, llvm::Align(static_cast<uint64_t>(it->second))));
    }
  }
  f->addFnAttr(llvm::Attribute::NoUnwind);
  return f;
}

void CodeGenLLVM::add_function(const tir::PrimFunc& f, const std::string& name) {
  func_name_ = name;
  vars_.clear();
  data_align_.clear();
  index_mod_.clear();
  num_outlined_ = 0;
  parallel_depth_ = 0;
  llvm::Function* kernel = get_or_create_kernel(mod_, name);
  fn_ = kernel;
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", kernel));
  llvm::Value* args = kernel->getArg(0);
  llvm::Value* num_args = kernel->getArg(1);
  const std::vector<Var>& params = f->params();
  const std::string fname = esc(name);

  std::string list;
  for (size_t i = 0; i < params.size(); ++i) list += (i ? ", " : "") + esc(params[i].name());
  check_or_fail(b_.CreateICmpEQ(num_args, b_.getInt32(static_cast<uint32_t>(params.size()))), kAnvilErrorType,
                fname + ": expected " + std::to_string(params.size()) + " arguments (" + list + ") but got %d",
                {num_args});

  // The kind-name table for messages.
  auto* names_type = llvm::ArrayType::get(b_.getPtrTy(), std::size(kKindNames));
  llvm::GlobalVariable* names_global = mod_.getNamedGlobal("__anvil_kind_names");
  if (!names_global) {
    std::vector<llvm::Constant*> names;
    for (const char* n : kKindNames) names.push_back(b_.CreateGlobalStringPtr(n, "kind_name"));
    names_global = new llvm::GlobalVariable(mod_, names_type, true, llvm::GlobalValue::PrivateLinkage,
                                            llvm::ConstantArray::get(names_type, names), "__anvil_kind_names");
  }
  auto kind_name = [&](llvm::Value* kind) {
    llvm::Value* idx = b_.CreateSelect(b_.CreateICmpULT(kind, b_.getInt32(12)), kind, b_.getInt32(12));
    return b_.CreateLoad(b_.getPtrTy(), b_.CreateInBoundsGEP(names_type, names_global, {b_.getInt32(0), idx}));
  };

  std::vector<Var> bound;  // compute-function arguments, in binding order
  std::vector<TensorArg> tensors;
  for (size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i];
    std::string label = "argument " + std::to_string(i) + " (" + esc(p.name()) + ")";
    llvm::Value* cell = b_.CreateConstInBoundsGEP1_32(abi_.value, args, static_cast<unsigned>(i));
    llvm::Value* kind = b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(abi_.value, cell, kValueKind), "kind");
    llvm::Value* payload = b_.CreateStructGEP(abi_.value, cell, kValuePayload);
    tir::Buffer buf = f->buffer_of(p);
    if (buf.defined()) {
      check_or_fail(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilTensor)), kAnvilErrorType,
                    fname + ": " + label + " must be a tensor but got %s", {kind_name(kind)});
      TensorArg t;
      t.buffer = buf;
      t.index = static_cast<int>(i);
      t.label = label;
      llvm::Value* tensor = b_.CreateLoad(b_.getPtrTy(), payload, p.name());
      llvm::Value* device = b_.CreateStructGEP(abi_.tensor, tensor, kTensorDevice);
      llvm::Value* dev_type = b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(abi_.device, device, 0));
      check_or_fail(b_.CreateICmpEQ(dev_type, b_.getInt32(kDLCPU)), kAnvilErrorValue,
                    fname + ": " + label + " is on device type %d but expected the CPU (1)", {dev_type});
      llvm::Value* ndim = b_.CreateLoad(b_.getInt32Ty(), b_.CreateStructGEP(abi_.tensor, tensor, kTensorNdim));
      int nd = buf.ndim();
      check_or_fail(b_.CreateICmpEQ(ndim, b_.getInt32(static_cast<uint32_t>(nd))), kAnvilErrorValue,
                    fname + ": " + label + " has %d dimensions but expected " + std::to_string(nd), {ndim});
      llvm::Value* dt = b_.CreateStructGEP(abi_.tensor, tensor, kTensorDtype);
      llvm::Value* code = b_.CreateLoad(b_.getInt8Ty(), b_.CreateStructGEP(abi_.dtype, dt, 0));
      llvm::Value* bits = b_.CreateLoad(b_.getInt8Ty(), b_.CreateStructGEP(abi_.dtype, dt, 1));
      llvm::Value* lanes = b_.CreateLoad(b_.getInt16Ty(), b_.CreateStructGEP(abi_.dtype, dt, 2));
      DataType want = buf->dtype();
      check_or_fail(b_.CreateICmpEQ(lanes, b_.getInt16(static_cast<uint16_t>(want.lanes()))), kAnvilErrorType,
                    fname + ": " + label + " has %d lanes but expected " + std::to_string(want.lanes()),
                    {b_.CreateZExt(lanes, b_.getInt32Ty())});
      llvm::Value* dt_ok = b_.CreateAnd(b_.CreateICmpEQ(code, b_.getInt8(want.code())),
                                        b_.CreateICmpEQ(bits, b_.getInt8(static_cast<uint8_t>(want.bits()))));
      llvm::Value* code_name = b_.getInt32(0);
      {
        llvm::Value* s = b_.CreateGlobalStringPtr("type", "code_name");
        const std::pair<int, const char*> codes[] = {{kDLInt, "int"}, {kDLUInt, "uint"}, {kDLFloat, "float"},
                                                     {kDLBfloat, "bfloat"}, {6, "bool"},
                                                     {DataType::kFloat8E4M3FN, "float8_e4m3fn"},
                                                     {DataType::kFloat8E4M3FNUZ, "float8_e4m3fnuz"},
                                                     {DataType::kFloat8E5M2, "float8_e5m2"},
                                                     {DataType::kFloat8E5M2FNUZ, "float8_e5m2fnuz"},
                                                     {DataType::kFloat8E8M0FNU, "float8_e8m0fnu"},
                                                     {DataType::kFloat4E2M1FN, "float4_e2m1fn"}};
        for (const auto& [c, n] : codes)
          s = b_.CreateSelect(b_.CreateICmpEQ(code, b_.getInt8(static_cast<uint8_t>(c))), b_.CreateGlobalStringPtr(n, "code_name"), s);
        code_name = s;
      }
      check_or_fail(dt_ok, kAnvilErrorType,
                    fname + ": " + label + " has dtype %s%d but expected " + dtype_text(want),
                    {code_name, b_.CreateZExt(bits, b_.getInt32Ty())});
      t.data = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(abi_.tensor, tensor, kTensorData), p.name() + "_raw");
      t.byte_offset = b_.CreateLoad(b_.getInt64Ty(), b_.CreateStructGEP(abi_.tensor, tensor, kTensorByteOffset));
      llvm::Value* shape = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(abi_.tensor, tensor, kTensorShape));
      t.strides = b_.CreateLoad(b_.getPtrTy(), b_.CreateStructGEP(abi_.tensor, tensor, kTensorStrides));
      for (int d = 0; d < nd; ++d)
        t.dims.push_back(b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_32(b_.getInt64Ty(), shape, static_cast<unsigned>(d))));
      tensors.push_back(std::move(t));
      continue;
    }
    // Scalars.
    DataType t = p.dtype();
    llvm::Value* raw = b_.CreateLoad(b_.getInt64Ty(), payload);
    llvm::Value* value = nullptr;
    if (t.is_float()) {
      check_or_fail(b_.CreateOr(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilFloat)), b_.CreateICmpEQ(kind, b_.getInt32(kAnvilInt))),
                    kAnvilErrorType, fname + ": " + label + " must be a float but got %s", {kind_name(kind)});
      llvm::Value* as_double = b_.CreateSelect(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilFloat)),
                                               b_.CreateBitCast(raw, b_.getDoubleTy()), b_.CreateSIToFP(raw, b_.getDoubleTy()));
      if (t.is_low_precision_float())
        value = f32_to_lowp(t, b_.CreateFPTrunc(as_double, b_.getFloatTy()));
      else
        value = t.bits() == 64 ? as_double : b_.CreateFPTrunc(as_double, value_type(t));
    } else if (t.code() == DataType::kBool) {
      check_or_fail(b_.CreateOr(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilBool)), b_.CreateICmpEQ(kind, b_.getInt32(kAnvilInt))),
                    kAnvilErrorType, fname + ": " + label + " must be a bool but got %s", {kind_name(kind)});
      value = b_.CreateICmpNE(raw, b_.getInt64(0));
    } else if (ir::is_integer(t)) {
      check_or_fail(b_.CreateOr(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilInt)), b_.CreateICmpEQ(kind, b_.getInt32(kAnvilBool))),
                    kAnvilErrorType, fname + ": " + label + " must be an int but got %s", {kind_name(kind)});
      value = b_.CreateTrunc(raw, value_type(t));
    } else if (ir::is_handle(t)) {
      check_or_fail(b_.CreateICmpEQ(kind, b_.getInt32(kAnvilHandle)), kAnvilErrorType,
                    fname + ": " + label + " must be a handle but got %s", {kind_name(kind)});
      value = b_.CreateLoad(b_.getPtrTy(), payload);
    } else {
      not_implemented_error("llvm codegen: ", name, ": parameter ", p.name(), " of dtype ", dtype_text(t));
    }
    bind(p, value);
    bound.push_back(p);
  }

  // Bind symbolic dims (first use wins), strides and offsets.
  auto bind_from = [&](const PrimExpr& e, llvm::Value* v64) {
    const auto* var = e.as<ir::VarNode>();
    if (!var || vars_.count(var)) return;
    Var v(var);
    bind(v, b_.CreateTrunc(v64, value_type(v.dtype())));
    bound.push_back(v);
  };
  // Actual strides (the tensor's, or compact ones when it has none), per tensor.
  std::vector<std::vector<llvm::Value*>> actual_strides(tensors.size()), compact_strides(tensors.size());
  for (size_t k = 0; k < tensors.size(); ++k) {
    TensorArg& t = tensors[k];
    int nd = t.buffer.ndim();
    for (int d = 0; d < nd; ++d) bind_from(t.buffer->shape()[static_cast<size_t>(d)], t.dims[static_cast<size_t>(d)]);
    std::vector<llvm::Value*> compact(static_cast<size_t>(nd));
    llvm::Value* running = b_.getInt64(1);
    for (int d = nd - 1; d >= 0; --d) {
      compact[static_cast<size_t>(d)] = running;
      running = b_.CreateMul(running, t.dims[static_cast<size_t>(d)]);
    }
    compact_strides[k] = compact;
    if (nd == 0) continue;
    llvm::BasicBlock* before = b_.GetInsertBlock();
    auto* load_bb = llvm::BasicBlock::Create(ctx_, "strides_load", fn_);
    auto* join = llvm::BasicBlock::Create(ctx_, "strides_join", fn_);
    b_.CreateCondBr(b_.CreateIsNull(t.strides), join, load_bb);
    b_.SetInsertPoint(load_bb);
    std::vector<llvm::Value*> loaded;
    for (int d = 0; d < nd; ++d)
      loaded.push_back(b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_32(b_.getInt64Ty(), t.strides, static_cast<unsigned>(d))));
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    for (int d = 0; d < nd; ++d) {
      llvm::PHINode* phi = b_.CreatePHI(b_.getInt64Ty(), 2, "stride");
      phi->addIncoming(compact[static_cast<size_t>(d)], before);
      phi->addIncoming(loaded[static_cast<size_t>(d)], load_bb);
      actual_strides[k].push_back(phi);
    }
    if (!t.buffer->strides().empty())
      for (int d = 0; d < nd; ++d) bind_from(t.buffer->strides()[static_cast<size_t>(d)], actual_strides[k][static_cast<size_t>(d)]);
  }
  for (TensorArg& t : tensors) {
    const PrimExpr& off = t.buffer->elem_offset();
    if (off.defined() && off.as<ir::VarNode>()) {
      llvm::Value* elems = b_.CreateSDiv(t.byte_offset, b_.getInt64(t.buffer->dtype().bytes()));
      bind_from(off, elems);
    }
  }

  // Check everything against the bound values.
  for (size_t k = 0; k < tensors.size(); ++k) {
    TensorArg& t = tensors[k];
    int nd = t.buffer.ndim();
    std::string prefix = fname + ": " + t.label;
    if (nd > 0) {
      llvm::Value* ok = b_.getTrue();
      std::vector<llvm::Value*> expected;
      for (int d = 0; d < nd; ++d) {
        const PrimExpr& e = t.buffer->shape()[static_cast<size_t>(d)];
        llvm::Value* want = to_i64(expr(e), e.dtype());
        expected.push_back(want);
        ok = b_.CreateAnd(ok, b_.CreateICmpEQ(t.dims[static_cast<size_t>(d)], want));
      }
      std::string list_fmt;
      for (int d = 0; d < nd; ++d) list_fmt += d ? ", %lld" : "%lld";
      std::vector<llvm::Value*> msg_args = t.dims;
      msg_args.insert(msg_args.end(), expected.begin(), expected.end());
      check_or_fail(ok, kAnvilErrorValue, prefix + " has shape [" + list_fmt + "] but expected [" + list_fmt + "]", msg_args);

      llvm::Value* sok = b_.getTrue();
      std::vector<llvm::Value*> want_strides;
      bool has_strides = !t.buffer->strides().empty();
      for (int d = 0; d < nd; ++d) {
        llvm::Value* actual = actual_strides[k][static_cast<size_t>(d)];
        llvm::Value* want = compact_strides[k][static_cast<size_t>(d)];
        if (has_strides) {
          const PrimExpr& s = t.buffer->strides()[static_cast<size_t>(d)];
          want = to_i64(expr(s), s.dtype());
          sok = b_.CreateAnd(sok, b_.CreateICmpEQ(actual, want));
        } else {
          sok = b_.CreateAnd(sok, b_.CreateOr(b_.CreateICmpEQ(actual, want), b_.CreateICmpEQ(t.dims[static_cast<size_t>(d)], b_.getInt64(1))));
        }
        want_strides.push_back(want);
      }
      msg_args = actual_strides[k];
      msg_args.insert(msg_args.end(), want_strides.begin(), want_strides.end());
      check_or_fail(sok, kAnvilErrorValue,
                    prefix + " has strides [" + list_fmt + "] but expected [" + list_fmt + "]" + (has_strides ? "" : " (compact)"),
                    msg_args);
    }
    const PrimExpr& off = t.buffer->elem_offset();
    auto off_const = off.defined() ? ir::as_const_int(off) : std::optional<int64_t>(0);
    llvm::Value* data = t.data;
    if (off_const && *off_const == 0) {
      data = b_.CreateInBoundsGEP(b_.getInt8Ty(), t.data, t.byte_offset, t.buffer->name());
    } else {
      llvm::Value* want = b_.CreateMul(to_i64(expr(off), off.dtype()), b_.getInt64(t.buffer->dtype().bytes()));
      check_or_fail(b_.CreateICmpEQ(t.byte_offset, want), kAnvilErrorValue,
                    prefix + " has byte offset %lld but expected %lld", {t.byte_offset, want});
    }
    // Alignment: the buffer's declared alignment() is not required of arguments (numpy arrays
    // come in without a copy, 16-byte aligned from malloc or anywhere in a view); the kernel
    // checks and assumes only natural alignment, min(alignment(), element size) — what the loads
    // have always assumed — so every element-aligned tensor works and others get this error
    // instead of undefined behaviour. Memory the kernel allocates itself is 64-byte aligned.
    DataType elem = ir::element_of(t.buffer->dtype());
    int64_t align = std::min<int64_t>(t.buffer->alignment(), elem.bytes());
    if (align > 1) {
      llvm::Value* low = b_.CreateAnd(b_.CreatePtrToInt(data, b_.getInt64Ty()), b_.getInt64(static_cast<uint64_t>(align - 1)));
      check_or_fail(b_.CreateICmpEQ(low, b_.getInt64(0)), kAnvilErrorValue,
                    prefix + " has data address %p but expected a multiple of " + std::to_string(align) + " (" +
                        dtype_text(elem) + " elements must be aligned; pass an aligned copy, e.g. anvil.tensor(array))",
                    {data});
    }
    auto [it, fresh] = data_align_.emplace(t.buffer->data().get(), align);
    if (!fresh) it->second = std::min(it->second, align);
    bind(t.buffer->data(), data);
    bound.push_back(t.buffer->data());
  }

  // The compute function.
  llvm::Function* impl = make_body_function("__anvil_impl_" + name, bound, {});
  std::vector<llvm::Value*> call_args;
  for (const Var& v : bound) call_args.push_back(lookup(v.get()));
  llvm::Value* status = b_.CreateCall(impl, call_args);
  b_.CreateRet(status);

  fn_ = impl;
  vars_.clear();
  for (size_t i = 0; i < bound.size(); ++i) bind(bound[i], impl->getArg(static_cast<unsigned>(i)));
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", impl));
  stmt(f->body());
  b_.CreateRet(b_.getInt32(0));
  vars_.clear();
}

Module build_llvm(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  if (target.kind() != TargetKind::kLLVM) value_error("build_llvm: target '", target.str(), "' is not an llvm target");
  initialize_llvm();
  LLVMTargetSpec spec = resolve_llvm_target(target);
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("anvil", *context);
  {
    CodeGenLLVM cg(*module, spec);
    std::set<std::string> names;
    for (const tir::PrimFunc& f : funcs) {
      if (!f.defined()) value_error("build_llvm: undefined PrimFunc");
      std::optional<std::string> name = f->str_attr(tir::attr::kGlobalSymbol);
      if (!name || name->empty()) value_error("build_llvm: a PrimFunc has no global_symbol attribute");
      if (!names.insert(*name).second) value_error("build_llvm: two functions are named '", *name, "'");
      tir::PrimFunc lowered = tir::passes::lower_parallel(tir::passes::storage_flatten(f));
      cg.add_function(lowered, *name);
    }
  }
  return make_llvm_module(std::move(module), std::move(context), target);
}

}  // namespace anvil::codegen
