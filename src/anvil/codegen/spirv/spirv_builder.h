// SpirvBuilder: writes one SPIR-V module as words, section by section, in the order the
// specification's logical layout fixes (capabilities, extensions, extended-instruction imports,
// memory model, entry points, execution modes, debug names, annotations, types/constants/global
// variables, function bodies). It allocates result ids, deduplicates types and constants, and
// declares a capability or extension only when something asks for it. It knows nothing of TIR:
// codegen_spirv.h drives it. The module targets SPIR-V 1.3 (Vulkan 1.1): StorageBuffer is core.
//
//   SpirvBuilder b;
//   uint32_t f32 = b.type_float(32);
//   uint32_t one = b.const_float(f32, 1.0);
//   b.begin_function(b.type_void(), "main");  ... b.emit(spv::OpReturn, {}); b.end_function();
//   std::vector<uint32_t> words = b.finish();
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <spirv/unified1/spirv.hpp>

namespace anvil::codegen::spirv {

class SpirvBuilder {
 public:
  SpirvBuilder() = default;

  uint32_t new_id() { return next_id_++; }

  // Declared once each, on first use.
  void capability(spv::Capability cap);
  void extension(std::string_view name);
  bool has_capability(spv::Capability cap) const { return capabilities_set_.count(cap) != 0; }
  // The id of the "GLSL.std.450" import (imported on first use).
  uint32_t glsl_std450();

  // ---- types (deduplicated; struct types are not, they carry their own decorations) ----
  uint32_t type_void();
  uint32_t type_bool();
  uint32_t type_int(int bits, bool is_signed);
  uint32_t type_float(int bits);
  uint32_t type_vector(uint32_t elem, int count);
  uint32_t type_pointer(spv::StorageClass storage, uint32_t pointee);
  uint32_t type_function(uint32_t ret, const std::vector<uint32_t>& params);
  // An array of `length` (an id of a constant) elements; runtime arrays have no length.
  uint32_t type_array(uint32_t elem, uint32_t length_id);
  uint32_t type_runtime_array(uint32_t elem);
  uint32_t type_struct(const std::vector<uint32_t>& members);

  // ---- constants (deduplicated by type and bits) ----
  uint32_t const_bool(bool value);
  // An integer constant of an int type of `bits` (the value's low bits).
  uint32_t const_int(uint32_t type, int bits, bool is_signed, uint64_t value);
  // A float constant of a float type of `bits` (16: the half bits are computed here).
  uint32_t const_float(uint32_t type, int bits, double value);

  // A global OpVariable (pointer type ptr_type) in `storage`.
  uint32_t global_variable(uint32_t ptr_type, spv::StorageClass storage);

  // ---- debug names and decorations ----
  void name(uint32_t id, std::string_view text);
  void member_name(uint32_t type, uint32_t member, std::string_view text);
  void decorate(uint32_t id, spv::Decoration d, const std::vector<uint32_t>& literals = {});
  void member_decorate(uint32_t type, uint32_t member, spv::Decoration d, const std::vector<uint32_t>& literals = {});

  // ---- entry point and execution modes ----
  void entry_point(spv::ExecutionModel model, uint32_t function, std::string_view name,
                   const std::vector<uint32_t>& interface);
  void execution_mode(uint32_t function, spv::ExecutionMode mode, const std::vector<uint32_t>& literals);

  // ---- function bodies ----
  // Starts a function with no parameters and its first block; returns the function's id.
  uint32_t begin_function(uint32_t ret_type, uint32_t function_type);
  // A Function-storage variable: placed at the start of the function's first block, as required.
  uint32_t function_variable(uint32_t ptr_type);
  // An instruction without a result (operands as words).
  void emit(spv::Op op, const std::vector<uint32_t>& operands);
  // An instruction with a result type and a fresh result id, which it returns.
  uint32_t value(spv::Op op, uint32_t type, const std::vector<uint32_t>& operands);
  // A GLSL.std.450 instruction.
  uint32_t ext_glsl(uint32_t type, uint32_t instruction, const std::vector<uint32_t>& args);
  // OpLabel of a block whose id was made with new_id().
  void label(uint32_t id);
  void end_function();

  // The complete module: header (magic, version 1.3, generator 0, bound, 0) and the sections.
  std::vector<uint32_t> finish() const;

 private:
  static void append(std::vector<uint32_t>* out, spv::Op op, const std::vector<uint32_t>& operands);
  uint32_t cached_type(spv::Op op, const std::vector<uint32_t>& operands);

  uint32_t next_id_ = 1;
  std::set<spv::Capability> capabilities_set_;
  std::set<std::string, std::less<>> extensions_set_;
  std::vector<uint32_t> capabilities_, extensions_, imports_, entry_points_, exec_modes_, debug_, annotations_,
      globals_, function_head_, function_vars_, function_body_, functions_;
  uint32_t glsl_ = 0;
  std::map<std::vector<uint32_t>, uint32_t> type_cache_;   // op + operands -> id
  std::map<std::vector<uint32_t>, uint32_t> const_cache_;  // type + value words -> id
  uint32_t true_ = 0, false_ = 0;
};

}  // namespace anvil::codegen::spirv
