// SpirvBuilder (see spirv_builder.h): word encoding, sections and caches.
#include "anvil/codegen/spirv/spirv_builder.h"

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/ir/float16.h"

namespace anvil::codegen::spirv {

void SpirvBuilder::append(std::vector<uint32_t>* out, spv::Op op, const std::vector<uint32_t>& operands) {
  const uint32_t count = static_cast<uint32_t>(operands.size() + 1);
  ANVIL_ICHECK(count <= 0xFFFF, "SPIR-V instruction too long");
  out->push_back((count << 16) | static_cast<uint32_t>(op));
  out->insert(out->end(), operands.begin(), operands.end());
}

namespace {
// A literal string: UTF-8 bytes, nul-terminated, padded with zeros to whole words.
std::vector<uint32_t> string_words(std::string_view s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0);
  std::memcpy(w.data(), s.data(), s.size());
  return w;
}
}  // namespace

void SpirvBuilder::capability(spv::Capability cap) {
  if (!capabilities_set_.insert(cap).second) return;
  append(&capabilities_, spv::OpCapability, {static_cast<uint32_t>(cap)});
}

void SpirvBuilder::extension(std::string_view name) {
  if (extensions_set_.count(name)) return;
  extensions_set_.emplace(name);
  append(&extensions_, spv::OpExtension, string_words(name));
}

uint32_t SpirvBuilder::glsl_std450() {
  if (glsl_ == 0) {
    glsl_ = new_id();
    std::vector<uint32_t> ops{glsl_};
    auto s = string_words("GLSL.std.450");
    ops.insert(ops.end(), s.begin(), s.end());
    append(&imports_, spv::OpExtInstImport, ops);
  }
  return glsl_;
}

uint32_t SpirvBuilder::cached_type(spv::Op op, const std::vector<uint32_t>& operands) {
  std::vector<uint32_t> key{static_cast<uint32_t>(op)};
  key.insert(key.end(), operands.begin(), operands.end());
  auto it = type_cache_.find(key);
  if (it != type_cache_.end()) return it->second;
  uint32_t id = new_id();
  std::vector<uint32_t> ops{id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  append(&globals_, op, ops);
  type_cache_.emplace(std::move(key), id);
  return id;
}

uint32_t SpirvBuilder::type_void() { return cached_type(spv::OpTypeVoid, {}); }
uint32_t SpirvBuilder::type_bool() { return cached_type(spv::OpTypeBool, {}); }
uint32_t SpirvBuilder::type_int(int bits, bool is_signed) {
  return cached_type(spv::OpTypeInt, {static_cast<uint32_t>(bits), is_signed ? 1u : 0u});
}
uint32_t SpirvBuilder::type_float(int bits) { return cached_type(spv::OpTypeFloat, {static_cast<uint32_t>(bits)}); }
uint32_t SpirvBuilder::type_vector(uint32_t elem, int count) {
  return cached_type(spv::OpTypeVector, {elem, static_cast<uint32_t>(count)});
}
uint32_t SpirvBuilder::type_pointer(spv::StorageClass storage, uint32_t pointee) {
  return cached_type(spv::OpTypePointer, {static_cast<uint32_t>(storage), pointee});
}
uint32_t SpirvBuilder::type_function(uint32_t ret, const std::vector<uint32_t>& params) {
  std::vector<uint32_t> ops{ret};
  ops.insert(ops.end(), params.begin(), params.end());
  return cached_type(spv::OpTypeFunction, ops);
}
uint32_t SpirvBuilder::type_array(uint32_t elem, uint32_t length_id) {
  return cached_type(spv::OpTypeArray, {elem, length_id});
}
uint32_t SpirvBuilder::type_runtime_array(uint32_t elem) { return cached_type(spv::OpTypeRuntimeArray, {elem}); }

uint32_t SpirvBuilder::type_struct(const std::vector<uint32_t>& members) {
  uint32_t id = new_id();
  std::vector<uint32_t> ops{id};
  ops.insert(ops.end(), members.begin(), members.end());
  append(&globals_, spv::OpTypeStruct, ops);
  return id;
}

uint32_t SpirvBuilder::const_bool(bool value) {
  uint32_t& slot = value ? true_ : false_;
  if (slot == 0) {
    uint32_t t = type_bool();
    slot = new_id();
    append(&globals_, value ? spv::OpConstantTrue : spv::OpConstantFalse, {t, slot});
  }
  return slot;
}

uint32_t SpirvBuilder::const_int(uint32_t type, int bits, bool is_signed, uint64_t value) {
  std::vector<uint32_t> key{type};
  if (bits == 64) {
    key.push_back(static_cast<uint32_t>(value));
    key.push_back(static_cast<uint32_t>(value >> 32));
  } else {
    const uint64_t mask = bits >= 32 ? 0xFFFFFFFFull : ((1ull << bits) - 1);
    uint64_t v = value & mask;
    // Narrow signed types are sign-extended into the word, unsigned ones zero-extended.
    if (is_signed && bits < 32 && ((v >> (bits - 1)) & 1)) v |= ~mask;
    key.push_back(static_cast<uint32_t>(v));
  }
  auto it = const_cache_.find(key);
  if (it != const_cache_.end()) return it->second;
  uint32_t id = new_id();
  std::vector<uint32_t> ops{type, id};
  ops.insert(ops.end(), key.begin() + 1, key.end());
  append(&globals_, spv::OpConstant, ops);
  const_cache_.emplace(std::move(key), id);
  return id;
}

uint32_t SpirvBuilder::const_float(uint32_t type, int bits, double value) {
  std::vector<uint32_t> key{type};
  if (bits == 64) {
    uint64_t u;
    std::memcpy(&u, &value, 8);
    key.push_back(static_cast<uint32_t>(u));
    key.push_back(static_cast<uint32_t>(u >> 32));
  } else if (bits == 32) {
    float f = static_cast<float>(value);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    key.push_back(u);
  } else {
    key.push_back(ir::double_to_half_bits(value));
  }
  auto it = const_cache_.find(key);
  if (it != const_cache_.end()) return it->second;
  uint32_t id = new_id();
  std::vector<uint32_t> ops{type, id};
  ops.insert(ops.end(), key.begin() + 1, key.end());
  append(&globals_, spv::OpConstant, ops);
  const_cache_.emplace(std::move(key), id);
  return id;
}

uint32_t SpirvBuilder::global_variable(uint32_t ptr_type, spv::StorageClass storage) {
  uint32_t id = new_id();
  append(&globals_, spv::OpVariable, {ptr_type, id, static_cast<uint32_t>(storage)});
  return id;
}

void SpirvBuilder::name(uint32_t id, std::string_view text) {
  std::vector<uint32_t> ops{id};
  auto s = string_words(text);
  ops.insert(ops.end(), s.begin(), s.end());
  append(&debug_, spv::OpName, ops);
}

void SpirvBuilder::member_name(uint32_t type, uint32_t member, std::string_view text) {
  std::vector<uint32_t> ops{type, member};
  auto s = string_words(text);
  ops.insert(ops.end(), s.begin(), s.end());
  append(&debug_, spv::OpMemberName, ops);
}

void SpirvBuilder::decorate(uint32_t id, spv::Decoration d, const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> ops{id, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(&annotations_, spv::OpDecorate, ops);
}

void SpirvBuilder::member_decorate(uint32_t type, uint32_t member, spv::Decoration d,
                                   const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> ops{type, member, static_cast<uint32_t>(d)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(&annotations_, spv::OpMemberDecorate, ops);
}

void SpirvBuilder::entry_point(spv::ExecutionModel model, uint32_t function, std::string_view name,
                               const std::vector<uint32_t>& interface) {
  std::vector<uint32_t> ops{static_cast<uint32_t>(model), function};
  auto s = string_words(name);
  ops.insert(ops.end(), s.begin(), s.end());
  ops.insert(ops.end(), interface.begin(), interface.end());
  append(&entry_points_, spv::OpEntryPoint, ops);
}

void SpirvBuilder::execution_mode(uint32_t function, spv::ExecutionMode mode, const std::vector<uint32_t>& literals) {
  std::vector<uint32_t> ops{function, static_cast<uint32_t>(mode)};
  ops.insert(ops.end(), literals.begin(), literals.end());
  append(&exec_modes_, spv::OpExecutionMode, ops);
}

uint32_t SpirvBuilder::begin_function(uint32_t ret_type, uint32_t function_type) {
  ANVIL_ICHECK(function_head_.empty(), "SpirvBuilder: nested begin_function");
  uint32_t id = new_id();
  append(&function_head_, spv::OpFunction, {ret_type, id, static_cast<uint32_t>(spv::FunctionControlMaskNone),
                                            function_type});
  append(&function_head_, spv::OpLabel, {new_id()});
  return id;
}

uint32_t SpirvBuilder::function_variable(uint32_t ptr_type) {
  uint32_t id = new_id();
  append(&function_vars_, spv::OpVariable, {ptr_type, id, static_cast<uint32_t>(spv::StorageClassFunction)});
  return id;
}

void SpirvBuilder::emit(spv::Op op, const std::vector<uint32_t>& operands) { append(&function_body_, op, operands); }

uint32_t SpirvBuilder::value(spv::Op op, uint32_t type, const std::vector<uint32_t>& operands) {
  uint32_t id = new_id();
  std::vector<uint32_t> ops{type, id};
  ops.insert(ops.end(), operands.begin(), operands.end());
  append(&function_body_, op, ops);
  return id;
}

uint32_t SpirvBuilder::ext_glsl(uint32_t type, uint32_t instruction, const std::vector<uint32_t>& args) {
  std::vector<uint32_t> ops{glsl_std450(), instruction};
  ops.insert(ops.end(), args.begin(), args.end());
  return value(spv::OpExtInst, type, ops);
}

void SpirvBuilder::label(uint32_t id) { append(&function_body_, spv::OpLabel, {id}); }

void SpirvBuilder::end_function() {
  append(&function_body_, spv::OpFunctionEnd, {});
  functions_.insert(functions_.end(), function_head_.begin(), function_head_.end());
  functions_.insert(functions_.end(), function_vars_.begin(), function_vars_.end());
  functions_.insert(functions_.end(), function_body_.begin(), function_body_.end());
  function_head_.clear();
  function_vars_.clear();
  function_body_.clear();
}

std::vector<uint32_t> SpirvBuilder::finish() const {
  ANVIL_ICHECK(function_head_.empty(), "SpirvBuilder::finish inside a function");
  std::vector<uint32_t> w{spv::MagicNumber, 0x00010300u, 0u, next_id_, 0u};
  for (const auto* s : {&capabilities_, &extensions_, &imports_}) w.insert(w.end(), s->begin(), s->end());
  std::vector<uint32_t> mm;
  append(&mm, spv::OpMemoryModel,
         {static_cast<uint32_t>(spv::AddressingModelLogical), static_cast<uint32_t>(spv::MemoryModelGLSL450)});
  w.insert(w.end(), mm.begin(), mm.end());
  for (const auto* s : {&entry_points_, &exec_modes_, &debug_, &annotations_, &globals_, &functions_})
    w.insert(w.end(), s->begin(), s->end());
  return w;
}

}  // namespace anvil::codegen::spirv
