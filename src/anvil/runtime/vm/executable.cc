// Executable: listing, statistics, verification and lookup from a module tree.
#include "anvil/runtime/vm/executable.h"

#include <set>
#include <sstream>

#include "anvil/base/error.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {
namespace {

// Number of words instruction i occupies, or -1 if its header is malformed.
int64_t instruction_words(const ExecutableNode& e, int64_t i, int64_t limit) {
  int64_t at = e.instr_offset[static_cast<size_t>(i)];
  if (at < 0 || at >= limit) return -1;
  const Word* w = e.instr_data.data() + at;
  switch (static_cast<Opcode>(w[0])) {
    case Opcode::kCall:
      if (limit - at < 4 || w[3] < 0 || w[3] > limit - at - 4) return -1;
      return 4 + w[3];
    case Opcode::kRet: return 2;
    case Opcode::kGoto: return 2;
    case Opcode::kIf: return 3;
  }
  return -1;
}

}  // namespace

void verify_executable(const ExecutableNode& e) {
  auto fail = [](auto&&... parts) { value_error("invalid vm executable: ", parts...); };
  const int64_t num_instr = static_cast<int64_t>(e.instr_offset.size());
  const int64_t num_words = static_cast<int64_t>(e.instr_data.size());
  const int64_t num_funcs = static_cast<int64_t>(e.func_table.size());
  const int64_t num_consts = static_cast<int64_t>(e.constants.size());
  // Instruction boundaries: each instruction lies inside the data and they do not overlap.
  for (int64_t i = 0; i < num_instr; ++i) {
    int64_t size = instruction_words(e, i, num_words);
    if (size < 0 || e.instr_offset[static_cast<size_t>(i)] + size > num_words)
      fail("instruction ", i, " is malformed or runs past the code (", num_words, " words)");
    if (i + 1 < num_instr && e.instr_offset[static_cast<size_t>(i + 1)] != e.instr_offset[static_cast<size_t>(i)] + size)
      fail("instruction ", i + 1, " does not start where instruction ", i, " ends");
  }
  for (int64_t f = 0; f < num_funcs; ++f) {
    const FuncInfo& info = e.func_table[static_cast<size_t>(f)];
    if (info.kind != FuncKind::kVMFunc) {
      if (info.kind != FuncKind::kPackedFunc) fail("function ", f, " has unknown kind ", static_cast<int>(info.kind));
      continue;
    }
    const std::string where = "function '" + info.name + "'";
    if (info.start_instr < 0 || info.end_instr <= info.start_instr || info.end_instr > num_instr)
      fail(where, ": instruction range [", info.start_instr, ", ", info.end_instr, ") is outside the code (",
           num_instr, " instructions)");
    if (info.num_args < 0 || info.register_file_size < info.num_args || info.register_file_size > (int64_t{1} << 24))
      fail(where, ": ", info.num_args, " arguments do not fit its ", info.register_file_size, " registers");
    if (!info.param_names.empty() && static_cast<int64_t>(info.param_names.size()) != info.num_args)
      fail(where, ": ", info.param_names.size(), " parameter names for ", info.num_args, " arguments");
    auto check_reg = [&](int64_t pc, RegName r, bool write) {
      if (r == kVoidRegister || (!write && r == kVMRegister)) return;
      if (r < 0 || r >= info.register_file_size)
        fail(where, ", instruction ", pc, ": register %", r, " is outside its ", info.register_file_size,
             " registers");
    };
    for (int64_t pc = info.start_instr; pc < info.end_instr; ++pc) {
      const Word* w = e.instruction(pc);
      switch (static_cast<Opcode>(w[0])) {
        case Opcode::kCall: {
          check_reg(pc, w[1], true);
          if (w[2] < 0 || w[2] >= num_funcs) fail(where, ", instruction ", pc, ": function index ", w[2], " out of range");
          const FuncInfo& callee = e.func_table[static_cast<size_t>(w[2])];
          if (callee.kind == FuncKind::kVMFunc && callee.num_args != w[3])
            fail(where, ", instruction ", pc, ": calls '", callee.name, "' with ", w[3], " arguments but it takes ",
                 callee.num_args);
          for (int64_t a = 0; a < w[3]; ++a) {
            Arg arg = Arg::decode(w[4 + a]);
            switch (arg.kind) {
              case ArgKind::kRegister: check_reg(pc, arg.value, false); break;
              case ArgKind::kImmediate: break;
              case ArgKind::kConstant:
                if (arg.value < 0 || arg.value >= num_consts)
                  fail(where, ", instruction ", pc, ": constant index ", arg.value, " out of range");
                break;
              case ArgKind::kFunction:
                if (arg.value < 0 || arg.value >= num_funcs)
                  fail(where, ", instruction ", pc, ": function index ", arg.value, " out of range");
                break;
              default: fail(where, ", instruction ", pc, ": argument ", a, " has unknown kind");
            }
          }
          break;
        }
        case Opcode::kRet: check_reg(pc, w[1], false); break;
        case Opcode::kGoto:
          // Compared as offsets, not pc + offset: a hostile offset near INT64_MAX must not overflow.
          if (w[1] == 0 || w[1] < info.start_instr - pc || w[1] >= info.end_instr - pc)
            fail(where, ", instruction ", pc, ": goto offset ", w[1], " leaves the function");
          break;
        case Opcode::kIf:
          check_reg(pc, w[1], false);
          if (w[2] <= 1 || w[2] >= info.end_instr - pc)
            fail(where, ", instruction ", pc, ": if false-offset ", w[2], " leaves the function");
          break;
      }
    }
    // The last instruction must not fall through the end of the function.
    auto last = static_cast<Opcode>(e.instruction(info.end_instr - 1)[0]);
    if (last != Opcode::kRet && last != Opcode::kGoto) fail(where, ": does not end with ret or goto");
  }
  for (int64_t c = 0; c < num_consts; ++c) {
    ValueKind k = e.constants[static_cast<size_t>(c)].kind();
    if (k == ValueKind::kFunction || k == ValueKind::kModule || k == ValueKind::kObject || k == ValueKind::kHandle ||
        k == ValueKind::kArray)
      fail("constant ", c, " is a ", value_kind_name(k), ", which a constant pool cannot hold");
  }
}

int64_t ExecutableNode::find_function(const std::string& name) const {
  auto it = func_map.find(name);
  return it == func_map.end() ? -1 : it->second;
}

std::vector<std::string> ExecutableNode::list_functions() const {
  std::vector<std::string> names;
  for (const auto& f : func_table)
    if (f.kind == FuncKind::kVMFunc) names.push_back(f.name);
  return names;
}

std::string ExecutableNode::as_text() const {
  std::ostringstream os;
  for (const FuncInfo& f : func_table) {
    if (f.kind != FuncKind::kVMFunc) continue;
    os << "@" << f.name << "(";
    for (size_t i = 0; i < f.param_names.size(); ++i) os << (i ? ", " : "") << f.param_names[i];
    os << ")  # " << f.num_args << " args, " << f.register_file_size << " registers\n";
    for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
      const Word* w = instruction(pc);
      os << "  " << pc << ": ";
      switch (static_cast<Opcode>(w[0])) {
        case Opcode::kCall: {
          os << "call @" << func_table[static_cast<size_t>(w[2])].name << " in:";
          for (int64_t a = 0; a < w[3]; ++a) os << (a ? ", " : " ") << Arg::decode(w[4 + a]).to_string();
          os << " dst: " << Arg::reg(w[1]).to_string();
          break;
        }
        case Opcode::kRet: os << "ret " << Arg::reg(w[1]).to_string(); break;
        case Opcode::kGoto: os << "goto " << (w[1] > 0 ? "+" : "") << w[1]; break;
        case Opcode::kIf: os << "if " << Arg::reg(w[1]).to_string() << " else +" << w[2]; break;
      }
      os << "\n";
    }
  }
  for (size_t c = 0; c < constants.size(); ++c) os << "c[" << c << "] = " << constants[c].to_string() << "\n";
  return os.str();
}

std::string ExecutableNode::stats() const {
  size_t vm_funcs = list_functions().size();
  return str_cat("vm executable: ", vm_funcs, " VM functions, ", func_table.size() - vm_funcs,
                 " packed functions, ", instr_offset.size(), " instructions (", instr_data.size(), " words), ",
                 constants.size(), " constants");
}

std::optional<Function> ExecutableNode::get_local_function(const std::string& name) {
  Ref<ExecutableNode> self(this);
  if (name == "as_text") return Function::from_typed([self]() { return self->as_text(); }, name);
  if (name == "stats") return Function::from_typed([self]() { return self->stats(); }, name);
  if (name == "has_function")
    return Function::from_typed([self](const std::string& f) { return self->find_function(f) >= 0; }, name);
  if (name == "vm_load_executable")
    return Function::from_typed(
        [self]() { return VirtualMachine::create(Executable(self).as_module(), {Device::cpu()}).as_module(); }, name);
  return std::nullopt;
}

Executable Executable::from_module(const Module& module) {
  if (!module.defined()) value_error("expected a vm executable but the module is undefined");
  if (module.kind() == kExecutableKind)
    return Executable(Ref<ExecutableNode>(static_cast<ExecutableNode*>(module.node())));
  for (const Module& child : module.imports())
    if (child.kind() == kExecutableKind) return from_module(child);
  value_error("expected a vm executable, or a library containing one, but got a module of kind '", module.kind(),
              "'");
}

}  // namespace anvil::vm
