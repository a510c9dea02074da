// ExecBuilder: emitting and checking VM programs.
#include "anvil/runtime/vm/exec_builder.h"

#include <set>

#include "anvil/base/error.h"

namespace anvil::vm {

ExecBuilder::ExecBuilder() : exec_(make_object<ExecutableNode>()) {}

int64_t ExecBuilder::declare_function(const std::string& name, std::vector<std::string> param_names) {
  if (name.empty()) value_error("ExecBuilder: a function needs a name");
  if (auto it = exec_->func_map.find(name); it != exec_->func_map.end()) {
    FuncInfo& f = exec_->func_table[static_cast<size_t>(it->second)];
    if (f.kind != FuncKind::kVMFunc)
      value_error("ExecBuilder: '", name, "' was already used as a packed function; declare VM functions before calling them");
    if (f.param_names != param_names)
      value_error("ExecBuilder: '", name, "' was declared with ", f.num_args, " parameters, now with ", param_names.size());
    return it->second;
  }
  FuncInfo info;
  info.kind = FuncKind::kVMFunc;
  info.name = name;
  info.num_args = static_cast<int64_t>(param_names.size());
  info.param_names = std::move(param_names);
  info.start_instr = info.end_instr = -1;  // no body yet
  exec_->func_table.push_back(std::move(info));
  int64_t index = static_cast<int64_t>(exec_->func_table.size()) - 1;
  exec_->func_map[name] = index;
  return index;
}

int64_t ExecBuilder::begin_function(const std::string& name, std::vector<std::string> param_names) {
  if (current_ >= 0)
    value_error("ExecBuilder: begin_function('", name, "') while '", exec_->func_table[static_cast<size_t>(current_)].name,
                "' is still open");
  int64_t index = declare_function(name, std::move(param_names));
  FuncInfo& f = exec_->func_table[static_cast<size_t>(index)];
  if (f.start_instr >= 0) value_error("ExecBuilder: function '", name, "' already has a body");
  f.start_instr = next_instr();
  current_ = index;
  max_register_ = f.num_args - 1;
  return index;
}

void ExecBuilder::end_function() {
  check_in_function("end_function");
  FuncInfo& f = exec_->func_table[static_cast<size_t>(current_)];
  f.end_instr = next_instr();
  if (f.end_instr == f.start_instr) value_error("ExecBuilder: function '", f.name, "' has no instructions");
  f.register_file_size = max_register_ + 1;
  // Every register read must be a parameter or written somewhere in the function.
  std::set<RegName> written;
  for (RegName r = 0; r < f.num_args; ++r) written.insert(r);
  for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
    const Word* w = exec_->instruction(pc);
    if (static_cast<Opcode>(w[0]) == Opcode::kCall) written.insert(w[1]);
  }
  auto check_read = [&](int64_t pc, RegName r) {
    if (r >= kBeginSpecialReg || written.count(r)) return;
    value_error("ExecBuilder: function '", f.name, "', instruction ", pc - f.start_instr, ": register %", r,
                " is read but never written");
  };
  for (int64_t pc = f.start_instr; pc < f.end_instr; ++pc) {
    const Word* w = exec_->instruction(pc);
    switch (static_cast<Opcode>(w[0])) {
      case Opcode::kCall:
        for (int64_t a = 0; a < w[3]; ++a) {
          Arg arg = Arg::decode(w[4 + a]);
          if (arg.kind == ArgKind::kRegister) check_read(pc, arg.value);
        }
        break;
      case Opcode::kRet:
      case Opcode::kIf: check_read(pc, w[1]); break;
      case Opcode::kGoto: break;
    }
  }
  current_ = -1;
}

int64_t ExecBuilder::function_index(const std::string& name) {
  if (auto it = exec_->func_map.find(name); it != exec_->func_map.end()) return it->second;
  FuncInfo info;
  info.kind = FuncKind::kPackedFunc;
  info.name = name;
  exec_->func_table.push_back(std::move(info));
  int64_t index = static_cast<int64_t>(exec_->func_table.size()) - 1;
  exec_->func_map[name] = index;
  return index;
}

void ExecBuilder::check_in_function(const char* what) const {
  if (current_ < 0) value_error("ExecBuilder: ", what, " outside a function (call begin_function first)");
}

void ExecBuilder::check_register(RegName r, const char* what) const {
  if (r == kVoidRegister || r == kVMRegister) return;
  if (r < 0 || r >= kBeginSpecialReg) value_error("ExecBuilder: ", what, " register ", r, " is not a valid register");
}

int64_t ExecBuilder::push_instruction(std::initializer_list<Word> words, const std::vector<Arg>* args) {
  int64_t index = next_instr();
  exec_->instr_offset.push_back(static_cast<int64_t>(exec_->instr_data.size()));
  exec_->instr_data.insert(exec_->instr_data.end(), words);
  if (args)
    for (const Arg& a : *args) exec_->instr_data.push_back(a.encode());
  return index;
}

int64_t ExecBuilder::emit_call(const std::string& func, const std::vector<Arg>& args, RegName dst) {
  check_in_function("emit_call");
  return emit_call(function_index(func), args, dst);
}

int64_t ExecBuilder::emit_call(int64_t func_index, const std::vector<Arg>& args, RegName dst) {
  check_in_function("emit_call");
  if (func_index < 0 || func_index >= static_cast<int64_t>(exec_->func_table.size()))
    value_error("ExecBuilder: function index ", func_index, " is out of range");
  const FuncInfo& callee = exec_->func_table[static_cast<size_t>(func_index)];
  if (callee.kind == FuncKind::kVMFunc && callee.num_args != static_cast<int64_t>(args.size()))
    value_error("ExecBuilder: call to '", callee.name, "' with ", args.size(), " arguments, but it takes ",
                callee.num_args);
  if (dst == kVMRegister) value_error("ExecBuilder: the %vm register cannot be written");
  check_register(dst, "destination");
  if (dst != kVoidRegister) max_register_ = std::max(max_register_, dst);
  for (const Arg& a : args) {
    switch (a.kind) {
      case ArgKind::kRegister:
        check_register(a.value, "argument");
        if (a.value < kBeginSpecialReg) max_register_ = std::max(max_register_, a.value);
        break;
      case ArgKind::kImmediate:
        if (a.value > kMaxImmediate || a.value < -kMaxImmediate)
          value_error("ExecBuilder: immediate ", a.value, " does not fit in 56 bits; use add_constant");
        break;
      case ArgKind::kConstant:
        if (a.value < 0 || a.value >= static_cast<int64_t>(exec_->constants.size()))
          value_error("ExecBuilder: constant index ", a.value, " is out of range");
        break;
      case ArgKind::kFunction:
        if (a.value < 0 || a.value >= static_cast<int64_t>(exec_->func_table.size()))
          value_error("ExecBuilder: function index ", a.value, " is out of range");
        break;
    }
  }
  return push_instruction({static_cast<Word>(Opcode::kCall), dst, func_index, static_cast<Word>(args.size())}, &args);
}

int64_t ExecBuilder::emit_ret(RegName result) {
  check_in_function("emit_ret");
  check_register(result, "result");
  return push_instruction({static_cast<Word>(Opcode::kRet), result});
}

int64_t ExecBuilder::emit_goto(int64_t pc_offset) {
  check_in_function("emit_goto");
  return push_instruction({static_cast<Word>(Opcode::kGoto), pc_offset});
}

int64_t ExecBuilder::emit_if(RegName cond, int64_t false_offset) {
  check_in_function("emit_if");
  check_register(cond, "condition");
  return push_instruction({static_cast<Word>(Opcode::kIf), cond, false_offset});
}

void ExecBuilder::patch_jump(int64_t instr_index, int64_t offset) {
  if (instr_index < 0 || instr_index >= next_instr()) value_error("ExecBuilder: patch_jump: no instruction ", instr_index);
  Word* w = exec_->instr_data.data() + exec_->instr_offset[static_cast<size_t>(instr_index)];
  auto op = static_cast<Opcode>(w[0]);
  if (op == Opcode::kGoto) w[1] = offset;
  else if (op == Opcode::kIf) w[2] = offset;
  else value_error("ExecBuilder: patch_jump: instruction ", instr_index, " is a ", opcode_name(op), ", not goto/if");
}

int64_t ExecBuilder::add_constant(const Value& value) {
  auto same = [&](const Value& c) {
    if (c.kind() != value.kind()) return false;
    switch (value.kind()) {
      case ValueKind::kInt:
      case ValueKind::kBool: return c.as_int() == value.as_int();
      case ValueKind::kString: return c.as_string() == value.as_string();
      case ValueKind::kShape: return c.as_shape() == value.as_shape();
      case ValueKind::kDataType: return c.as_dtype() == value.as_dtype();
      case ValueKind::kDevice: return c.as_device() == value.as_device();
      default: return c.object_ptr() != nullptr && c.object_ptr() == value.object_ptr();
    }
  };
  switch (value.kind()) {
    case ValueKind::kFunction:
    case ValueKind::kModule:
    case ValueKind::kObject:
    case ValueKind::kHandle:
    case ValueKind::kArray:  // not serialisable; build tuples with vm.builtin.make_tuple
      value_error("ExecBuilder: a ", value.kind_name(), " cannot be a constant");
    default: break;
  }
  for (size_t i = 0; i < exec_->constants.size(); ++i)
    if (same(exec_->constants[i])) return static_cast<int64_t>(i);
  exec_->constants.push_back(value);
  return static_cast<int64_t>(exec_->constants.size()) - 1;
}

Arg ExecBuilder::int_arg(int64_t value) {
  if (value <= kMaxImmediate && value >= -kMaxImmediate) return Arg::imm(value);
  return Arg::constant(add_constant(Value(value)));
}

Executable ExecBuilder::get() {
  if (current_ >= 0)
    value_error("ExecBuilder: function '", exec_->func_table[static_cast<size_t>(current_)].name, "' is not ended");
  for (const FuncInfo& f : exec_->func_table)
    if (f.kind == FuncKind::kVMFunc && f.start_instr < 0)
      value_error("ExecBuilder: function '", f.name, "' was declared but never given a body");
  verify_executable(*exec_);
  Executable out(exec_);
  exec_ = make_object<ExecutableNode>();
  return out;
}

}  // namespace anvil::vm
