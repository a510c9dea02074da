// Opcode names and argument printing.
#include "anvil/runtime/vm/bytecode.h"

namespace anvil::vm {

std::string_view opcode_name(Opcode op) {
  switch (op) {
#define ANVIL_VM_OPCODE(name, text, code) \
  case Opcode::name:                      \
    return text;
#include "anvil/runtime/vm/opcodes.def"
#undef ANVIL_VM_OPCODE
  }
  return "unknown";
}

std::string Arg::to_string() const {
  switch (kind) {
    case ArgKind::kRegister:
      if (value == kVoidRegister) return "%void";
      if (value == kVMRegister) return "%vm";
      return "%" + std::to_string(value);
    case ArgKind::kImmediate:
      return "i" + std::to_string(value);
    case ArgKind::kConstant:
      return "c[" + std::to_string(value) + "]";
    case ArgKind::kFunction:
      return "f[" + std::to_string(value) + "]";
  }
  return "?";
}

}  // namespace anvil::vm
