// Launch metadata of SPIR-V compute kernels: the contract between the SPIR-V code generator
// (codegen/spirv, which fills it) and the Vulkan runtime module (vulkan_module.h, which checks a
// call's arguments against it, fills the push constants and dispatches). It travels inside an
// exported library's blob (serialize/parse below, versioned and length-checked).
//
// A kernel's parameters are the PrimFunc's, in order: tensors and scalars. Tensors are storage
// buffers in descriptor set 0 (binding = their order among the tensors). The shader also needs
// the scalar values and every symbolic dimension of a tensor shape; those are the kernel's
// "scalar slots", laid out in one block (std430 offsets): push constants while the block fits the
// target's max_push_constants_size, otherwise a uniform buffer at binding = number of tensors,
// written per dispatch. Grid sizes (workgroup counts) are small integer expressions over the
// integer slots; the workgroup size is constant (the shader's LocalSize).
#pragma once

#include <dlpack/dlpack.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace anvil::vulkan {

// An integer expression in postfix form: each entry is an opcode, kConst and kSlot followed by
// one operand (the constant / the slot index). Division and modulo are floor division.
enum class LaunchOp : int64_t { kConst = 0, kSlot, kAdd, kSub, kMul, kFloorDiv, kFloorMod, kMin, kMax };
struct LaunchExpr {
  std::vector<int64_t> code;
  static LaunchExpr constant(int64_t v) { return LaunchExpr{{static_cast<int64_t>(LaunchOp::kConst), v}}; }
  // The value with `slots` as the integer slot values; ValueError on division by zero or a
  // malformed program (a parsed artifact may be corrupt).
  int64_t eval(std::span<const int64_t> slots) const;
};

// One scalar slot: where its value comes from at call time and where it lies in the block.
struct ScalarSlot {
  enum Source : int32_t { kScalarArg = 0, kTensorDim = 1 };
  Source source = kScalarArg;
  int32_t arg = 0;     // the kernel argument it comes from
  int32_t dim = 0;     // kTensorDim: that tensor's dimension
  DLDataType dtype{};  // its type in the shader (int32/int64/uint32/float32/float64/float16, lanes 1)
  uint32_t offset = 0; // byte offset in the block
};

struct KernelArg {
  enum Kind : int32_t { kTensor = 0, kScalar = 1 };
  Kind kind = kTensor;
  std::string name;    // the parameter's name, for error messages
  DLDataType dtype{};  // tensor: element type; scalar: value type
  // Tensors: descriptor binding, and per dimension the constant extent or -1 with the slot that
  // holds it (shape_slot; -1 for constant dimensions). A dimension whose symbol already came from
  // an earlier tensor dimension has that slot too: the call must agree.
  int32_t binding = -1;
  std::vector<int64_t> shape;
  std::vector<int32_t> shape_slot;
  // Scalars: the slot holding the value.
  int32_t slot = -1;
};

struct KernelInfo {
  std::string name;             // the function's global symbol
  std::string entry_point;      // OpEntryPoint name in the module ("main" or the name)
  std::vector<uint32_t> spirv;  // the module's words, one entry point
  std::vector<KernelArg> args;
  std::vector<ScalarSlot> slots;
  uint32_t block_bytes = 0;            // size of the scalar block (0: no block)
  bool block_in_uniform = false;       // true: uniform buffer at binding = number of tensors
  std::array<LaunchExpr, 3> grid;      // workgroup counts x, y, z
  std::array<uint32_t, 3> workgroup_size{1, 1, 1};
  uint32_t shared_memory_bytes = 0;    // workgroup memory it declares (for checks and messages)
  int32_t num_tensors() const;
};

// Binary form: magic "ANVK", version, then each kernel; parse throws ValueError naming what is
// wrong with a truncated or inconsistent blob (never reads past `bytes`).
std::string serialize_kernels(const std::vector<KernelInfo>& kernels);
std::vector<KernelInfo> parse_kernels(std::string_view bytes);

}  // namespace anvil::vulkan
