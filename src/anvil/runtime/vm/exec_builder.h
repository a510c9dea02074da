// ExecBuilder: the public way to write VM programs — the graph compiler emits through it, and
// tests and users can hand-build programs. Mistakes are caught while building, not at run time:
// a call to a VM function with the wrong number of arguments fails at emit_call; get() rejects
// registers read but never written, jumps outside the function and functions that never return.
//
//   ExecBuilder b;
//   b.begin_function("main", {"x", "y"});            // x -> %0, y -> %1
//   b.emit_call("vm.builtin.add", {Arg::reg(0), Arg::reg(1)}, 2);
//   b.emit_ret(2);
//   b.end_function();
//   Executable exe = b.get();
#pragma once

#include <string>
#include <vector>

#include "anvil/runtime/vm/executable.h"

namespace anvil::vm {

class ExecBuilder {
 public:
  ExecBuilder();

  // Declares a VM function ahead of its body (for recursion and forward calls).
  int64_t declare_function(const std::string& name, std::vector<std::string> param_names);
  // Starts the body of a VM function (declaring it if needed); returns its index.
  int64_t begin_function(const std::string& name, std::vector<std::string> param_names);
  void end_function();

  // Index of a function by name: a VM function if one is declared, otherwise a packed function
  // (kernel or builtin) entry, created on first use.
  int64_t function_index(const std::string& name);

  // dst: a register, or kVoidRegister to drop the result. Returns the instruction index.
  int64_t emit_call(const std::string& func, const std::vector<Arg>& args, RegName dst = kVoidRegister);
  int64_t emit_call(int64_t func_index, const std::vector<Arg>& args, RegName dst = kVoidRegister);
  int64_t emit_ret(RegName result);
  int64_t emit_goto(int64_t pc_offset);
  int64_t emit_if(RegName cond, int64_t false_offset);
  // Rewrites the offset of an earlier goto/if (for forward jumps).
  void patch_jump(int64_t instr_index, int64_t offset);
  // Index the next emitted instruction will get.
  int64_t next_instr() const { return static_cast<int64_t>(exec_->instr_offset.size()); }

  // Adds a constant (Tensor, Shape, String, Int, Float, Bool, DataType, Device); equal scalars,
  // strings and shapes are shared. Returns its index for Arg::constant.
  int64_t add_constant(const Value& value);
  // An int becomes an immediate when it fits, else a constant.
  Arg int_arg(int64_t value);

  // Verifies and returns the executable; the builder is empty afterwards.
  Executable get();

 private:
  void check_in_function(const char* what) const;
  void check_register(RegName r, const char* what) const;
  int64_t push_instruction(std::initializer_list<Word> words, const std::vector<Arg>* args = nullptr);

  Ref<ExecutableNode> exec_;
  int64_t current_ = -1;  // function being emitted
  RegName max_register_ = -1;
};

}  // namespace anvil::vm
