// The VM's instruction encoding. Four opcodes; every operation is a Call to a function (a VM
// function, a kernel from the compiled library, or a builtin from the registry).
//
// Code is a flat array of 64-bit words; instruction i starts at instr_offset[i]:
//   Call: [1, dst, func_index, num_args, arg_0 ... arg_{n-1}]
//   Ret:  [2, result_register]
//   Goto: [3, pc_offset]                 relative, in instructions; never 0
//   If:   [4, cond_register, false_offset]  cond != 0 -> pc + 1, else pc + false_offset (> 1)
// An argument word keeps its kind in bits 63..56 and a sign-extended value in bits 55..0.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace anvil::vm {

using Word = int64_t;
using RegName = int64_t;

enum class Opcode : int64_t {
#define ANVIL_VM_OPCODE(name, text, code) name = code,
#include "anvil/runtime/vm/opcodes.def"
#undef ANVIL_VM_OPCODE
};
std::string_view opcode_name(Opcode op);

enum class ArgKind : int64_t {
  kRegister = 0,   // value: register number (or a special register)
  kImmediate = 1,  // value: an int64 within +-(2^55 - 1)
  kConstant = 2,   // value: index into the constant pool
  kFunction = 3,   // value: index into the function table (the function itself, as a value)
};

inline constexpr int kArgValueBits = 56;
inline constexpr int64_t kMaxImmediate = (int64_t{1} << 55) - 1;

// Special registers, above any real register number.
inline constexpr RegName kBeginSpecialReg = int64_t{1} << 54;
inline constexpr RegName kVoidRegister = kBeginSpecialReg + 0;  // write: discard; read: null
inline constexpr RegName kVMRegister = kBeginSpecialReg + 1;    // read: the VM (a handle)

struct Arg {
  ArgKind kind = ArgKind::kRegister;
  int64_t value = 0;

  static Arg reg(RegName r) { return {ArgKind::kRegister, r}; }
  static Arg imm(int64_t v) { return {ArgKind::kImmediate, v}; }
  static Arg constant(int64_t index) { return {ArgKind::kConstant, index}; }
  static Arg func(int64_t index) { return {ArgKind::kFunction, index}; }
  static Arg vm() { return reg(kVMRegister); }
  static Arg void_value() { return reg(kVoidRegister); }

  Word encode() const {
    return (static_cast<Word>(kind) << kArgValueBits) | (value & ((int64_t{1} << kArgValueBits) - 1));
  }
  static Arg decode(Word word) {
    auto kind = static_cast<ArgKind>(static_cast<uint64_t>(word) >> kArgValueBits);
    int64_t value = (word << (64 - kArgValueBits)) >> (64 - kArgValueBits);  // sign-extend
    return {kind, value};
  }
  std::string to_string() const;  // "%3", "i42", "c[1]", "f[2]", "%vm", "%void"
};

}  // namespace anvil::vm
