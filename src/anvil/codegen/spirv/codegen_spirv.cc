// The SPIR-V code generator's frame: kernel parameters, scalar slots, thread axes and grid
// expressions, the entry point; build_vulkan and the module's source text (codegen_spirv.h).
#include "anvil/codegen/spirv/codegen_spirv.h"

#include <algorithm>
#include <set>

#include "anvil/base/error.h"
#include "anvil/codegen/spirv/codegen_spirv_impl.h"
#include "anvil/codegen/spirv/spirv_tools.h"
#include "anvil/ir/printer.h"
#include "anvil/runtime/device/vulkan/vulkan_module.h"
#include "anvil/tir/stmt_functor.h"

namespace anvil::codegen::spirv {
namespace {

// The type a scalar slot has in the block for a var of type t.
DataType slot_type(DataType t) {
  if (t.is_float()) return t.bits() == 64 ? DataType::float64() : DataType::float32();
  if (t.bits() == 64) return DataType::int64();
  if (t.is_uint()) return DataType::uint32();
  return DataType::int32();  // int8/16/32, bool
}

}  // namespace

CodegenSpirv::CodegenSpirv(const tir::PrimFunc& f, const VulkanTarget& target)
    : f_(f), target_(target), name_(f->str_attr(tir::attr::kGlobalSymbol).value_or("main")) {}

void CodegenSpirv::unsupported(const std::string& what) const {
  not_implemented_error("vulkan codegen: kernel '", name_, "': ", what, " is not supported by the SPIR-V back end");
}

// Tensors -> storage buffers; scalars and symbolic dimensions -> slots (scalars first, so a
// dimension that is also a scalar parameter shares the scalar's slot).
void CodegenSpirv::declare_params() {
  tir::post_order_visit(f_->body(), nullptr, [&](const tir::StmtNode* s) {
    if (s->kind() == tir::StmtKind::kBufferStore)
      written_.push_back(static_cast<const tir::BufferStoreNode*>(s)->buffer()->data().get());
  });
  auto add_slot = [&](const ir::VarNode* v, vulkan::ScalarSlot::Source src, int arg, int dim) {
    vulkan::ScalarSlot slot;
    slot.source = src;
    slot.arg = arg;
    slot.dim = dim;
    slot.dtype = slot_type(v->dtype()).dl();
    int id = static_cast<int>(info_.slots.size());
    info_.slots.push_back(slot);
    slot_vars_.push_back(v);
    slot_of_[v] = id;
    return id;
  };
  const auto& params = f_->params();
  info_.args.resize(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Var& p = params[i];
    if (ir::is_handle(p.dtype())) continue;
    DataType t = p.dtype();
    if (t.lanes() != 1 || !(ir::is_numeric(t) || t.is_bool()) || t.is_low_precision_float() ||
        (ir::is_integer(t) && t.bits() < 8))
      unsupported("scalar parameter '" + p.name() + "' of type " + ir::dtype_name(t));
    vulkan::KernelArg& a = info_.args[i];
    a.kind = vulkan::KernelArg::kScalar;
    a.name = p.name();
    a.dtype = t.dl();
    a.slot = add_slot(p.get(), vulkan::ScalarSlot::kScalarArg, static_cast<int>(i), 0);
  }
  int binding = 0;
  std::set<uint32_t> strided;
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::Var& p = params[i];
    if (!ir::is_handle(p.dtype())) continue;
    ir::Buffer buf = f_->buffer_of(p);
    if (!buf.defined()) unsupported("handle parameter '" + p.name() + "' without a buffer");
    vulkan::KernelArg& a = info_.args[i];
    a.kind = vulkan::KernelArg::kTensor;
    a.name = buf->name();
    a.dtype = buf->dtype().dl();
    a.binding = binding;
    if (!buf->strides().empty()) unsupported("tensor '" + buf->name() + "' with explicit strides");
    if (buf->elem_offset().defined() && ir::as_const_int(buf->elem_offset()) != std::optional<int64_t>(0))
      unsupported("tensor '" + buf->name() + "' with an element offset");
    for (int d = 0; d < buf->ndim(); ++d) {
      const PrimExpr& e = buf->shape()[d];
      if (auto c = ir::as_const_int(e)) {
        a.shape.push_back(*c);
        a.shape_slot.push_back(-1);
      } else if (auto* v = e.as<ir::VarNode>()) {
        auto it = slot_of_.find(v);
        int slot = it != slot_of_.end() ? it->second
                                        : add_slot(v, vulkan::ScalarSlot::kTensorDim, static_cast<int>(i), d);
        a.shape.push_back(-1);
        a.shape_slot.push_back(slot);
      } else {
        unsupported("tensor '" + buf->name() + "' whose dimension " + std::to_string(d) + " is the expression " +
                    ir::to_string(e));
      }
    }
    DataType elem = buf->dtype();
    if (elem.lanes() != 1) unsupported("tensor '" + buf->name() + "' of vector type");
    BufferVar bv;
    bv.elem = elem;
    bv.name = buf->name();
    bv.storage = spv::StorageClassStorageBuffer;
    bv.in_struct = true;
    bv.bool_as_u8 = elem.is_bool();
    DataType stored = elem.is_bool() ? DataType::uint8() : elem;
    require_buffer_access(stored);
    bv.elem_type = type_of(stored, Use::kStorage);
    uint32_t arr = b_.type_runtime_array(bv.elem_type);
    if (strided.insert(arr).second)  // one runtime array type per element type, decorated once
      b_.decorate(arr, spv::DecorationArrayStride, {static_cast<uint32_t>(stored.bytes())});
    uint32_t st = b_.type_struct({arr});
    b_.decorate(st, spv::DecorationBlock);
    b_.member_decorate(st, 0, spv::DecorationOffset, {0});
    bool written = std::find(written_.begin(), written_.end(), buf->data().get()) != written_.end();
    if (!written) b_.member_decorate(st, 0, spv::DecorationNonWritable);
    bv.var = b_.global_variable(b_.type_pointer(spv::StorageClassStorageBuffer, st), spv::StorageClassStorageBuffer);
    b_.decorate(bv.var, spv::DecorationDescriptorSet, {0});
    b_.decorate(bv.var, spv::DecorationBinding, {static_cast<uint32_t>(binding)});
    b_.name(bv.var, buf->name());
    buffers_[buf->data().get()] = bv;
    buffers_[p.get()] = bv;
    ++binding;
  }
}

// The slots' block: offsets aligned to each slot's size (std430 = scalar layout for scalars).
void CodegenSpirv::declare_slots_block() {
  if (info_.slots.empty()) return;
  uint32_t offset = 0, align = 4;
  std::vector<uint32_t> members;
  for (auto& s : info_.slots) {
    DataType t(s.dtype);
    uint32_t size = static_cast<uint32_t>(t.bytes());
    align = std::max(align, size);
    offset = (offset + size - 1) / size * size;
    s.offset = offset;
    offset += size;
    members.push_back(type_of(t, Use::kArith));
  }
  info_.block_bytes = (offset + align - 1) / align * align;
  slot_types_ = members;
  info_.block_in_uniform = static_cast<int64_t>(info_.block_bytes) > target_.max_push_constants_size;
  if (info_.block_in_uniform && static_cast<int64_t>(info_.block_bytes) > target_.max_uniform_buffer_range)
    value_error("vulkan codegen: kernel '", name_, "': its ", info_.slots.size(), " scalar slots take ",
                info_.block_bytes, " bytes, more than max_uniform_buffer_range (", target_.max_uniform_buffer_range,
                ")");
  uint32_t st = b_.type_struct(members);
  b_.decorate(st, spv::DecorationBlock);
  for (size_t i = 0; i < info_.slots.size(); ++i) {
    b_.member_decorate(st, static_cast<uint32_t>(i), spv::DecorationOffset, {info_.slots[i].offset});
    b_.member_name(st, static_cast<uint32_t>(i), slot_vars_[i]->name());
  }
  block_storage_ = info_.block_in_uniform ? spv::StorageClassUniform : spv::StorageClassPushConstant;
  block_var_ = b_.global_variable(b_.type_pointer(block_storage_, st), block_storage_);
  b_.name(block_var_, "scalars");
  if (info_.block_in_uniform) {
    b_.decorate(block_var_, spv::DecorationDescriptorSet, {0});
    auto tensors = std::count_if(info_.args.begin(), info_.args.end(),
                                 [](const vulkan::KernelArg& a) { return a.kind == vulkan::KernelArg::kTensor; });
    b_.decorate(block_var_, spv::DecorationBinding, {static_cast<uint32_t>(tensors)});
  }
}

// Workgroup size (largest constant threadIdx extent per axis) and grid (blockIdx extents).
void CodegenSpirv::collect_thread_axes(const Stmt& body) {
  tir::post_order_visit(body, nullptr, [&](const tir::StmtNode* s) {
    if (s->kind() != tir::StmtKind::kFor) return;
    auto* op = static_cast<const tir::ForNode*>(s);
    if (op->for_kind() != tir::ForKind::kThreadBinding) return;
    const std::string& tag = op->thread_tag();
    if (tag.rfind("threadIdx.", 0) != 0 && tag.rfind("blockIdx.", 0) != 0)
      unsupported("thread tag '" + tag + "' (loop over '" + op->loop_var().name() + "')");
    ThreadAxis& ax = axes_[tag];
    ax.is_block = tag[0] == 'b';
    ax.dim = tag.back() - 'x';
    if (!ax.is_block) {
      auto ext = ir::as_const_int(op->extent());
      if (!ext || *ext <= 0)
        value_error("vulkan codegen: kernel '", name_, "': the extent of loop '", op->loop_var().name(), "' (bound to ",
                    tag, ") must be a positive constant, got ", ir::to_string(op->extent()));
      ax.size = std::max(ax.size, *ext);
    } else {
      vulkan::LaunchExpr g = launch_expr(op->extent());
      if (ax.seen && g.code != ax.grid.code)
        unsupported("two loops bound to " + tag + " with different extents");
      ax.grid = g;
    }
    ax.seen = true;
  });
  int64_t threads = 1;
  for (const auto& [tag, ax] : axes_) {
    if (ax.is_block) info_.grid[ax.dim] = ax.grid;
    else info_.workgroup_size[ax.dim] = static_cast<uint32_t>(ax.size), threads *= ax.size;
  }
  if (threads > target_.max_num_threads)
    value_error("vulkan codegen: kernel '", name_, "': its workgroup has ", threads, " invocations (",
                info_.workgroup_size[0], " x ", info_.workgroup_size[1], " x ", info_.workgroup_size[2],
                "), more than the target's max_num_threads (", target_.max_num_threads, ")");
  for (int d = 0; d < 3; ++d) {
    if (info_.grid[d].code.empty()) info_.grid[d] = vulkan::LaunchExpr::constant(1);
    if (info_.workgroup_size[d] > target_.max_workgroup_size[d])
      value_error("vulkan codegen: kernel '", name_, "': its workgroup size on axis ", "xyz"[d], " is ",
                  info_.workgroup_size[d], ", more than the target's limit of ", target_.max_workgroup_size[d]);
  }
}

vulkan::LaunchExpr CodegenSpirv::launch_expr(const PrimExpr& e) {
  vulkan::LaunchExpr r;
  launch_code(e, &r.code);
  return r;
}

void CodegenSpirv::launch_code(const PrimExpr& e, std::vector<int64_t>* code) {
  using vulkan::LaunchOp;
  auto op = [&](LaunchOp o) { code->push_back(static_cast<int64_t>(o)); };
  auto fail = [&](const std::string& why) {
    not_implemented_error("vulkan codegen: kernel '", name_, "': grid extent ", ir::to_string(e), ": ", why);
  };
  if (!ir::is_integer(e.dtype()) || e.dtype().lanes() != 1) fail("not a scalar integer");
  if (auto c = e.as<ir::IntImmNode>()) {
    op(LaunchOp::kConst);
    code->push_back(c->value());
    return;
  }
  if (auto v = e.as<ir::VarNode>()) {
    auto it = slot_of_.find(v);
    if (it == slot_of_.end()) fail("'" + v->name() + "' is neither a scalar argument nor a tensor dimension");
    op(LaunchOp::kSlot);
    code->push_back(it->second);
    return;
  }
  if (auto c = e.as<ir::CastNode>()) {
    if (!ir::is_integer(c->value().dtype())) fail("a cast from a non-integer");
    return launch_code(c->value(), code);
  }
  auto bin = [&](const auto* n, LaunchOp o) {
    launch_code(n->a(), code);
    launch_code(n->b(), code);
    op(o);
  };
  if (auto n = e.as<ir::AddNode>()) return bin(n, LaunchOp::kAdd);
  if (auto n = e.as<ir::SubNode>()) return bin(n, LaunchOp::kSub);
  if (auto n = e.as<ir::MulNode>()) return bin(n, LaunchOp::kMul);
  if (auto n = e.as<ir::FloorDivNode>()) return bin(n, LaunchOp::kFloorDiv);
  if (auto n = e.as<ir::FloorModNode>()) return bin(n, LaunchOp::kFloorMod);
  if (auto n = e.as<ir::MinNode>()) return bin(n, LaunchOp::kMin);
  if (auto n = e.as<ir::MaxNode>()) return bin(n, LaunchOp::kMax);
  fail(std::string("the form ") + std::string(ir::expr_kind_name(e.kind())) +
       " (only + - * floordiv floormod min max of constants and integer slots)");
}

uint32_t CodegenSpirv::builtin(spv::BuiltIn which) {
  auto it = builtins_.find(static_cast<int>(which));
  if (it != builtins_.end()) return it->second;
  uint32_t v3 = b_.type_vector(b_.type_int(32, false), 3);
  uint32_t var = b_.global_variable(b_.type_pointer(spv::StorageClassInput, v3), spv::StorageClassInput);
  b_.decorate(var, spv::DecorationBuiltIn, {static_cast<uint32_t>(which)});
  interface_.push_back(var);
  builtins_[static_cast<int>(which)] = var;
  return var;
}

vulkan::KernelInfo CodegenSpirv::run() {
  info_.name = name_;
  info_.entry_point = "main";
  b_.capability(spv::CapabilityShader);
  declare_params();
  declare_slots_block();
  collect_thread_axes(f_->body());
  uint32_t void_t = b_.type_void();
  uint32_t fn = b_.begin_function(void_t, b_.type_function(void_t, {}));
  // Slot values, loaded once at the top, converted to their vars' types.
  for (size_t i = 0; i < info_.slots.size(); ++i) {
    DataType st(info_.slots[i].dtype);
    uint32_t ptr = b_.value(spv::OpAccessChain, b_.type_pointer(block_storage_, slot_types_[i]),
                            {block_var_, const_i32(static_cast<int32_t>(i))});
    uint32_t v = b_.value(spv::OpLoad, slot_types_[i], {ptr});
    values_[slot_vars_[i]] = convert(v, st, slot_vars_[i]->dtype());
  }
  stmt(f_->body());
  b_.emit(spv::OpReturn, {});
  b_.end_function();
  b_.entry_point(spv::ExecutionModelGLCompute, fn, "main", interface_);
  b_.execution_mode(fn, spv::ExecutionModeLocalSize,
                    {info_.workgroup_size[0], info_.workgroup_size[1], info_.workgroup_size[2]});
  b_.name(fn, name_);
  if (shared_bytes_ > static_cast<uint64_t>(target_.max_shared_memory_per_block))
    value_error("vulkan codegen: kernel '", name_, "' uses ", shared_bytes_,
                " bytes of shared memory, more than the target's max_shared_memory_per_block (",
                target_.max_shared_memory_per_block, ")");
  info_.shared_memory_bytes = static_cast<uint32_t>(shared_bytes_);
  info_.spirv = b_.finish();
  return std::move(info_);
}

vulkan::KernelInfo codegen_spirv(const tir::PrimFunc& f, const VulkanTarget& target) {
  ANVIL_ICHECK(f.defined(), "codegen_spirv: undefined function");
  return CodegenSpirv(f, target).run();
}

}  // namespace anvil::codegen::spirv

namespace anvil::codegen {

Module build_vulkan(const std::vector<tir::PrimFunc>& funcs, const Target& target) {
  spirv::VulkanTarget t = spirv::resolve_vulkan_target(target);
  const bool validate = spirv::spirv_validation_enabled();
  std::vector<vulkan::KernelInfo> kernels;
  for (const auto& f : funcs) {
    kernels.push_back(spirv::codegen_spirv(f, t));
    if (validate) spirv::validate_spirv(kernels.back().spirv, kernels.back().name);
  }
  return vulkan::make_vulkan_module(std::move(kernels));
}

std::string vulkan_source(const Module& module, std::string_view format) {
  if (!format.empty() && format != "spirv")
    value_error("get_source: a module of kind 'vulkan' has SPIR-V assembly ('spirv') only, not '", format, "'");
  std::string out;
  for (const auto& k : vulkan::vulkan_module_kernels(module))
    out += "; kernel " + k.name + "\n" + spirv::disassemble_spirv(k.spirv) + "\n";
  return out;
}

}  // namespace anvil::codegen
