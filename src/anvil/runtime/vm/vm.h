// VirtualMachine: runs an Executable on a set of devices with a memory configuration per device.
// It is a Module (kind "vm"): `vm["main"](x, w)` calls a function; the stateful form is
// set_input / invoke_stateful / get_output; save_function binds arguments for repeated timing.
// By convention the last device is the host CPU (appended when missing): builtins use it for
// shape heaps and `device_index == -1`.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "anvil/runtime/function.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/vm/executable.h"

namespace anvil::vm {

inline constexpr const char* kVirtualMachineKind = "vm";

// A function value: a VM function (by index) or a packed function, plus captured arguments
// that are appended after the call's own arguments (make_closure binds the last arguments).
class ClosureNode final : public Object {
 public:
  std::string_view type_key() const override { return "vm.Closure"; }
  std::string name;
  int64_t func_index = -1;  // VM function index, or -1 when `packed` is set
  Function packed;
  std::vector<Value> captured;  // appended after the call's own arguments
};

// Which allocator each device uses; devices not listed get default_kind.
struct MemoryConfig {
  AllocatorKind default_kind = AllocatorKind::kPooled;
  std::map<DLDeviceType, AllocatorKind> per_device_type;
  // "naive", "pooled", or "cpu:pooled,vulkan:naive".
  static MemoryConfig parse(const std::string& text);
};

// What an instrument callback sees around each Call instruction.
struct CallEvent {
  bool before;               // true before the call, false after it
  const FuncInfo* callee;    // the function called
  const FuncInfo* caller;    // the VM function containing the instruction
  int64_t pc;                // instruction index
  std::span<const Value> args;
  const Value* result;       // after the call only
};
using Instrument = std::function<void(const CallEvent&)>;

class VirtualMachineNode final : public ModuleNode {
 public:
  VirtualMachineNode(Executable exec, std::vector<Device> devices, MemoryConfig memory);
  ~VirtualMachineNode() override;

  std::string kind() const override { return kVirtualMachineKind; }
  std::optional<Function> get_local_function(const std::string& name) override;
  std::vector<std::string> list_functions() const override;

  // Calls a VM function, a saved function, or a packed function of the table by name.
  Value invoke(const std::string& name, Args args);
  Value invoke_function(int64_t func_index, Args args);
  Value invoke_closure(const Value& closure, Args args);

  void set_input(const std::string& name, Args args);
  Value invoke_stateful(const std::string& name);
  Value get_output(const std::string& name) const;
  // Binds `args` (moved to devices[0]) so that `saved_name` calls `name` with them.
  void save_function(const std::string& name, const std::string& saved_name, Args args);

  void set_instrument(Instrument instrument) { instrument_ = std::move(instrument); }
  const Instrument& instrument() const { return instrument_; }

  const Executable& executable() const { return exec_; }
  const std::vector<Device>& devices() const { return devices_; }
  // device_index -1 (or devices().size() - 1) is the host.
  Device device(int64_t device_index) const;
  Allocator* allocator(int64_t device_index) const;

 private:
  struct Frame;
  Value run(int64_t func_index, Args args);
  void run_loop(Frame& frame);
  Value call_value(const Value& callee, Args args);
  // A result as handed to the caller: constants used in place (read-only library pages) and
  // views of them are copied, so that callers may write into whatever they get back.
  Value to_caller(Value v) const;
  [[noreturn]] void arity_error(const FuncInfo& info, size_t got) const;
  Frame* push_frame(const FuncInfo& info);
  void pop_frame();

  Executable exec_;
  std::vector<Device> devices_;
  std::vector<Allocator*> allocators_;
  std::vector<Value> constants_;   // tensors already on devices[0]
  std::vector<Value> func_pool_;   // per function: a Function (packed) or a closure (VM)
  std::vector<std::unique_ptr<Frame>> frames_;  // live frames, innermost last
  std::vector<std::unique_ptr<Frame>> free_frames_;
  std::unordered_map<std::string, std::vector<Value>> inputs_;
  std::unordered_map<std::string, Value> outputs_;
  std::unordered_map<std::string, Value> saved_;
  Instrument instrument_;
};

class VirtualMachine {
 public:
  VirtualMachine() = default;
  explicit VirtualMachine(Ref<VirtualMachineNode> node) : node_(std::move(node)) {}
  // `module`: an executable or a loaded library whose tree holds one.
  static VirtualMachine create(const Module& module, std::vector<Device> devices = {Device::cpu()},
                               MemoryConfig memory = {});

  VirtualMachineNode* operator->() const { return node_.get(); }
  VirtualMachineNode* get() const { return node_.get(); }
  Module as_module() const { return Module(Ref<ModuleNode>(node_.get())); }
  Function operator[](const std::string& name) const { return as_module().get_function(name); }

 private:
  Ref<VirtualMachineNode> node_;
};

// The VM a builtin was handed through Arg::vm(); TypeError if the value is not one.
VirtualMachineNode* vm_from_value(const Value& value);

// Registers vm.builtin.* and the executable loader (module.loader.vm.executable). Called by
// register_runtime_functions().
void register_vm_functions();

}  // namespace anvil::vm
