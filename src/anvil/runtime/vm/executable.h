// Executable: a VM program — function table, constant pool and code. It is a Module (kind
// "vm.executable") so it travels in a kernel library's blob and comes back from load_module;
// its imports hold the compiled kernels. Serialised by save_to_bytes (docs/vm-format.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "anvil/runtime/module/module.h"
#include "anvil/runtime/value.h"
#include "anvil/runtime/vm/bytecode.h"

namespace anvil::vm {

inline constexpr const char* kExecutableKind = "vm.executable";

enum class FuncKind : int32_t {
  kPackedFunc = 0,  // resolved at VM start: the executable's imports first, then the registry
  kVMFunc = 1,      // bytecode in this executable
};

struct FuncInfo {
  FuncKind kind = FuncKind::kPackedFunc;
  std::string name;
  int64_t start_instr = 0;  // kVMFunc: first instruction
  int64_t end_instr = 0;    // kVMFunc: one past the last
  int64_t num_args = 0;     // kVMFunc: parameters occupy registers 0..num_args-1
  int64_t register_file_size = 0;
  std::vector<std::string> param_names;
};

class ExecutableNode final : public ModuleNode {
 public:
  std::string kind() const override { return kExecutableKind; }
  bool is_binary_serializable() const override { return true; }
  std::string save_to_bytes() const override;  // executable_io.cc
  // "as_text", "stats", "has_function", "vm_load_executable" (-> a VirtualMachine on CPU).
  std::optional<Function> get_local_function(const std::string& name) override;
  std::vector<std::string> list_functions() const override;

  // Human-readable listing: "@main(x, w):\n  call @add in: %0, c[0] dst: %2\n  ret %2\n".
  std::string as_text() const;
  // Counts of functions, instructions and constants.
  std::string stats() const;
  // Index of a function, or -1.
  int64_t find_function(const std::string& name) const;
  // Code of instruction i.
  const Word* instruction(int64_t i) const { return instr_data.data() + instr_offset[static_cast<size_t>(i)]; }

  std::vector<FuncInfo> func_table;
  std::map<std::string, int64_t> func_map;
  std::vector<Value> constants;  // Tensor, Shape, String, Int, Float, Bool, DataType, Device
  // The owner of the read-only memory that tensor constants used in place point into (their
  // Tensor::owner(), shared by views of them); null when every constant was copied.
  std::shared_ptr<void> in_place_backing;
  std::vector<int64_t> instr_offset;
  std::vector<Word> instr_data;
};

class Executable {
 public:
  Executable() = default;
  explicit Executable(Ref<ExecutableNode> node) : node_(std::move(node)) {}
  // Accepts a module that is an executable, or one whose import tree contains one (the root of
  // a loaded library); ValueError otherwise.
  static Executable from_module(const Module& module);
  // Parses save_to_bytes() output; ValueError naming the section, field and offset on any
  // corruption, truncation or version mismatch. With `backing` (the owner of the memory `bytes`
  // lie in, unchanged while it lives: a loaded library's blob), tensor constants whose data is
  // 64-byte aligned there are used in place, read-only, instead of copied.
  static Executable load_from_bytes(std::string_view bytes, const std::shared_ptr<void>& backing = nullptr);

  ExecutableNode* operator->() const { return node_.get(); }
  ExecutableNode* get() const { return node_.get(); }
  Module as_module() const { return Module(Ref<ModuleNode>(node_.get())); }
  bool defined() const { return static_cast<bool>(node_); }

 private:
  Ref<ExecutableNode> node_;
};

// Checks every invariant the interpreter relies on (instruction bounds, register numbers
// below the frame size, constant/function indices, jump targets inside the function, call
// arity of VM functions, every VM function ending in ret/goto). Throws ValueError naming the
// function and instruction. Run by ExecBuilder::get() and after loading.
void verify_executable(const ExecutableNode& exec);

}  // namespace anvil::vm
