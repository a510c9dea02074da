// Internal: the class behind codegen_spirv() — one object per kernel. codegen_spirv.cc sets up
// parameters, scalar slots, thread axes and the module; codegen_spirv_expr.cc translates
// expressions, codegen_spirv_math.cc the intrinsics, codegen_spirv_stmt.cc statements.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <spirv/unified1/GLSL.std.450.h>

#include "anvil/codegen/spirv/spirv_builder.h"
#include "anvil/codegen/spirv/vulkan_target.h"
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"
#include "anvil/tir/prim_func.h"

namespace anvil::codegen::spirv {

using ir::DataType;
using ir::PrimExpr;
using tir::Stmt;

class CodegenSpirv {
 public:
  CodegenSpirv(const tir::PrimFunc& f, const VulkanTarget& target);
  vulkan::KernelInfo run();

  // How a type is used: arithmetic needs the type's arithmetic capability (Int8, Float16, ...);
  // storage (buffer loads/stores and conversions) only the buffer-access one.
  enum class Use { kArith, kStorage };

 private:
  // A buffer the kernel reads or writes, by its data var.
  struct BufferVar {
    uint32_t var = 0;                 // the OpVariable
    spv::StorageClass storage{};      // StorageBuffer, Function or Workgroup
    DataType elem;                    // TIR element type
    uint32_t elem_type = 0;           // SPIR-V element type as stored
    bool bool_as_u8 = false;          // bool stored as uint8 (storage buffers)
    bool in_struct = false;           // storage buffers: struct { T data[]; }
    std::string name;
  };
  // A thread axis (threadIdx.x, blockIdx.y, ...).
  struct ThreadAxis {
    bool is_block = false;
    int dim = 0;
    int64_t size = 0;       // threadIdx: the workgroup size on this axis
    bool seen = false;
    vulkan::LaunchExpr grid;  // blockIdx: the workgroup count
  };

  // ---- setup (codegen_spirv.cc) ----
  void declare_params();
  void declare_slots_block();
  void collect_thread_axes(const Stmt& s);
  vulkan::LaunchExpr launch_expr(const PrimExpr& e);
  void launch_code(const PrimExpr& e, std::vector<int64_t>* code);
  uint32_t builtin(spv::BuiltIn which);
  [[noreturn]] void unsupported(const std::string& what) const;

  // ---- types and constants (codegen_spirv_expr.cc) ----
  uint32_t type_of(DataType t, Use use = Use::kArith);
  void require_buffer_access(DataType t);
  uint32_t const_int(DataType t, int64_t v);
  uint32_t const_float(DataType t, double v);
  uint32_t const_u32(uint32_t v) { return const_int(DataType::uint32(), v); }
  uint32_t const_i32(int32_t v) { return const_int(DataType::int32(), v); }
  uint32_t convert(uint32_t v, DataType from, DataType to);
  uint32_t bitcast(uint32_t v, DataType to) { return b_.value(spv::OpBitcast, type_of(to, Use::kStorage), {v}); }

  // ---- expressions (codegen_spirv_expr.cc, codegen_spirv_math.cc) ----
  uint32_t expr(const PrimExpr& e);
  uint32_t binary(const PrimExpr& e);
  uint32_t compare(const PrimExpr& e);
  uint32_t floor_div(uint32_t a, uint32_t b, DataType t);
  uint32_t load(const PrimExpr& e);
  uint32_t element_pointer(const BufferVar& buf, const PrimExpr& index);
  uint32_t call(const PrimExpr& e);
  uint32_t float_math(uint32_t instruction, DataType t, const std::vector<uint32_t>& args);
  uint32_t erf(uint32_t x, DataType t);
  uint32_t shift(uint32_t x, uint32_t k, DataType t, bool left);
  const BufferVar& buffer_of(const ir::Buffer& b) const;

  // ---- statements (codegen_spirv_stmt.cc) ----
  void stmt(const Stmt& s);
  void for_loop(const tir::ForNode* op);
  void thread_loop(const tir::ForNode* op);
  void if_then_else(const tir::IfThenElseNode* op);
  void store(const tir::BufferStoreNode* op);
  void allocate(const tir::AllocateNode* op);
  void barrier();

  tir::PrimFunc f_;
  VulkanTarget target_;
  std::string name_;
  SpirvBuilder b_;
  vulkan::KernelInfo info_;

  std::unordered_map<const ir::VarNode*, uint32_t> values_;     // SSA values of vars
  std::unordered_map<const ir::VarNode*, uint32_t> var_ptrs_;   // loop vars: Function variables
  std::unordered_map<const ir::VarNode*, BufferVar> buffers_;   // by data var
  std::unordered_map<const ir::VarNode*, int> slot_of_;         // var -> scalar slot
  std::vector<const ir::VarNode*> slot_vars_;                   // slot -> its var
  std::unordered_map<std::string, ThreadAxis> axes_;            // by thread tag
  std::unordered_map<int, uint32_t> builtins_;                  // spv::BuiltIn -> Input variable
  std::vector<uint32_t> interface_;
  std::vector<const ir::VarNode*> written_;                     // data vars stored to
  uint32_t block_var_ = 0;
  spv::StorageClass block_storage_ = spv::StorageClassPushConstant;
  std::vector<uint32_t> slot_types_;
  uint64_t shared_bytes_ = 0;
};

}  // namespace anvil::codegen::spirv
