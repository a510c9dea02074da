// The VM interpreter: frames, the dispatch loop, closures and the stateful calling interface.
#include "anvil/runtime/vm/vm.h"

#include <pthread.h>

#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor.h"

namespace anvil::vm {

namespace {

// VMs running on this thread, innermost last. The %vm register hands builtins a raw pointer;
// vm_from_value accepts it only if that VM is running here, so a stray handle from a host
// program is a TypeError, not a crash.
thread_local std::vector<const VirtualMachineNode*> t_running;

}  // namespace

// True when less than kStackReserve bytes of this thread's stack remain below the caller.
static bool stack_nearly_exhausted() {
  constexpr uintptr_t kStackReserve = 256 * 1024;
  thread_local uintptr_t limit = [] {
    pthread_attr_t attr;
    void* low = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return uintptr_t{0};
    pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    return reinterpret_cast<uintptr_t>(low) + kStackReserve;
  }();
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) < limit;
}

struct VirtualMachineNode::Frame {
  const FuncInfo* info = nullptr;
  std::vector<Value> regs;
  std::vector<Value> call_args;  // reused by every call this frame makes
};

MemoryConfig MemoryConfig::parse(const std::string& text) {
  MemoryConfig config;
  if (text.find(':') == std::string::npos) {
    config.default_kind = allocator_kind_from_name(text);
    return config;
  }
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t colon = item.find(':');
    if (colon == std::string::npos)
      value_error("memory config '", text, "': expected device:allocator pairs such as cpu:pooled,vulkan:naive");
    config.per_device_type[device_type_from_name(item.substr(0, colon))] =
        allocator_kind_from_name(item.substr(colon + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return config;
}

VirtualMachineNode::VirtualMachineNode(Executable exec, std::vector<Device> devices, MemoryConfig memory)
    : exec_(std::move(exec)), devices_(std::move(devices)) {
  if (!exec_.defined()) value_error("VirtualMachine: the executable is undefined");
  if (devices_.empty() || devices_.back().type != kDLCPU) devices_.push_back(Device::cpu());
  for (const Device& d : devices_) {
    auto it = memory.per_device_type.find(d.type);
    allocators_.push_back(get_allocator(d, it == memory.per_device_type.end() ? memory.default_kind : it->second));
  }
  // Constants live on the first device, ready to be passed to its kernels.
  for (const Value& c : exec_->constants) {
    if (c.kind() == ValueKind::kTensor && !(c.as_tensor().device() == devices_[0]))
      constants_.emplace_back(c.as_tensor().copy_to(devices_[0], allocators_[0]));
    else
      constants_.push_back(c);
  }
  Module self_module = exec_.as_module();
  for (size_t i = 0; i < exec_->func_table.size(); ++i) {
    const FuncInfo& info = exec_->func_table[i];
    if (info.kind == FuncKind::kVMFunc) {
      auto closure = make_object<ClosureNode>();
      closure->name = info.name;
      closure->func_index = static_cast<int64_t>(i);
      func_pool_.push_back(Value::object(closure));
      continue;
    }
    std::optional<Function> fn;
    for (const Module& m : self_module.imports())
      if ((fn = m.find_function(info.name, true))) break;
    if (!fn) fn = Registry::find(info.name);
    if (!fn)
      value_error("VirtualMachine: cannot find function '", info.name,
                  "': it is neither in the executable's imported modules nor in the global registry");
    func_pool_.emplace_back(*fn);
  }
}

VirtualMachineNode::~VirtualMachineNode() = default;

Device VirtualMachineNode::device(int64_t device_index) const {
  auto n = static_cast<int64_t>(devices_.size());
  if (device_index == -1) return devices_.back();
  if (device_index < 0 || device_index >= n)
    index_error("VirtualMachine: device index ", device_index, " out of range (", n, " devices)");
  return devices_[static_cast<size_t>(device_index)];
}

Allocator* VirtualMachineNode::allocator(int64_t device_index) const {
  device(device_index);  // range check
  return device_index == -1 ? allocators_.back() : allocators_[static_cast<size_t>(device_index)];
}

void VirtualMachineNode::arity_error(const FuncInfo& info, size_t got) const {
  std::string params;
  for (size_t i = 0; i < info.param_names.size(); ++i) params += (i ? ", " : "") + info.param_names[i];
  type_error("vm function '", info.name, "' takes ", info.num_args, " argument", info.num_args == 1 ? "" : "s",
             " (", params, ") but got ", got);
}

VirtualMachineNode::Frame* VirtualMachineNode::push_frame(const FuncInfo& info) {
  std::unique_ptr<Frame> frame;
  if (free_frames_.empty()) {
    frame = std::make_unique<Frame>();
  } else {
    frame = std::move(free_frames_.back());
    free_frames_.pop_back();
  }
  frame->info = &info;
  frame->regs.resize(static_cast<size_t>(info.register_file_size));
  frames_.push_back(std::move(frame));
  return frames_.back().get();
}

void VirtualMachineNode::pop_frame() {
  std::unique_ptr<Frame> frame = std::move(frames_.back());
  frames_.pop_back();
  // Drop references now (tensors return to the pool) but keep the vectors' capacity.
  for (Value& r : frame->regs) r = Value();
  frame->call_args.clear();
  free_frames_.push_back(std::move(frame));
}

Value VirtualMachineNode::run(int64_t func_index, Args args) {
  const FuncInfo& info = exec_->func_table[static_cast<size_t>(func_index)];
  if (static_cast<int64_t>(args.size()) != info.num_args) arity_error(info, args.size());
  // Nested VM calls recurse on the C++ stack: stop a runaway program before it overflows the
  // stack of whatever thread runs it (threads and sanitizer builds have less room to spare).
  constexpr size_t kMaxCallDepth = 2000;
  if (frames_.size() >= kMaxCallDepth || stack_nearly_exhausted())
    runtime_error("vm function '", info.name, "': call depth ", frames_.size(),
                  " exhausts the stack or exceeds ", kMaxCallDepth, " (runaway recursion?)");
  Frame* frame = push_frame(info);
  t_running.push_back(this);
  struct PopGuard {
    VirtualMachineNode* vm;
    ~PopGuard() {
      t_running.pop_back();
      vm->pop_frame();
    }
  } guard{this};
  for (size_t i = 0; i < args.size(); ++i) frame->regs[i] = args[i];
  run_loop(*frame);
  return std::move(frame->call_args[0]);
}

void VirtualMachineNode::run_loop(Frame& frame) {
  const ExecutableNode& exec = *exec_.get();
  const FuncInfo& info = *frame.info;
  Value* regs = frame.regs.data();
  int64_t pc = info.start_instr;
  while (true) {
    const Word* w = exec.instruction(pc);
    switch (static_cast<Opcode>(w[0])) {
      case Opcode::kCall: {
        const int64_t n = w[3];
        auto& argv = frame.call_args;
        if (argv.size() != static_cast<size_t>(n)) argv.resize(static_cast<size_t>(n));
        for (int64_t a = 0; a < n; ++a) {
          Arg arg = Arg::decode(w[4 + a]);
          Value& slot = argv[static_cast<size_t>(a)];
          switch (arg.kind) {
            case ArgKind::kRegister:
              if (arg.value == kVMRegister) slot = Value::handle(this);
              else if (arg.value == kVoidRegister) slot = Value();
              else slot = regs[arg.value];
              break;
            case ArgKind::kImmediate: slot = Value(arg.value); break;
            case ArgKind::kConstant: slot = constants_[static_cast<size_t>(arg.value)]; break;
            case ArgKind::kFunction: slot = func_pool_[static_cast<size_t>(arg.value)]; break;
          }
        }
        const Value& callee = func_pool_[static_cast<size_t>(w[2])];
        Value result;
        try {
          if (instrument_) {
            instrument_({true, &exec.func_table[static_cast<size_t>(w[2])], &info, pc, argv, nullptr});
            result = call_value(callee, argv);
            instrument_({false, &exec.func_table[static_cast<size_t>(w[2])], &info, pc, argv, &result});
          } else {
            result = call_value(callee, argv);
          }
        } catch (const Error& e) {
          // Each VM frame the error crosses adds one line, innermost first, like a traceback;
          // deep recursion is cut at kMaxTraceLines so the message stays readable and cheap.
          constexpr int kMaxTraceLines = 16;
          std::string_view what = e.what();
          auto lines = std::count(what.begin(), what.end(), '\n');
          if (lines > kMaxTraceLines) throw;
          throw Error(e.kind(), str_cat(what, lines == kMaxTraceLines ? "\n  ... (more vm frames)" : "",
                                        lines == kMaxTraceLines ? "" : str_cat("\n  in vm function '", info.name,
                                        "', instruction ", pc - info.start_instr, ": call @",
                                        exec.func_table[static_cast<size_t>(w[2])].name)));
        }
        if (w[1] != kVoidRegister) regs[w[1]] = std::move(result);
        ++pc;
        break;
      }
      case Opcode::kRet: {
        // The result travels in call_args[0] so the registers can be cleared by pop_frame.
        Value result = w[1] == kVoidRegister ? Value() : regs[w[1]];
        frame.call_args.assign(1, std::move(result));
        return;
      }
      case Opcode::kGoto:
        pc += w[1];
        break;
      case Opcode::kIf: {
        const Value& cond = regs[w[1]];
        bool taken;
        try {
          taken = cond.as_bool();
        } catch (const Error&) {
          type_error("vm function '", info.name, "', instruction ", pc - info.start_instr, ": if condition %", w[1],
                     " must be a bool or int but is a ", cond.kind_name(), " (use vm.builtin.read_if_cond for tensors)");
        }
        pc += taken ? 1 : w[2];
        break;
      }
    }
  }
}

Value VirtualMachineNode::call_value(const Value& callee, Args args) {
  // The hot path: call the body in place, without taking a new reference to the function.
  if (callee.kind() == ValueKind::kFunction) return static_cast<FunctionNode*>(callee.object_ptr())->body(args);
  if (callee.kind() == ValueKind::kObject) {
    auto* closure = dynamic_cast<ClosureNode*>(callee.object_ptr());
    if (closure != nullptr) {
      if (closure->captured.empty()) {
        return closure->func_index >= 0 ? run(closure->func_index, args) : closure->packed.call(args);
      }
      std::vector<Value> all(args.begin(), args.end());
      all.insert(all.end(), closure->captured.begin(), closure->captured.end());
      return closure->func_index >= 0 ? run(closure->func_index, all) : closure->packed.call(all);
    }
  }
  type_error("VirtualMachine: cannot call a ", callee.kind_name(), " (", callee.to_string(), ")");
}

Value VirtualMachineNode::invoke_function(int64_t func_index, Args args) {
  if (func_index < 0 || func_index >= static_cast<int64_t>(func_pool_.size()))
    index_error("VirtualMachine: function index ", func_index, " out of range");
  return to_caller(call_value(func_pool_[static_cast<size_t>(func_index)], args));
}

Value VirtualMachineNode::invoke_closure(const Value& closure, Args args) { return to_caller(call_value(closure, args)); }

Value VirtualMachineNode::to_caller(Value v) const {
  const void* backing = exec_->in_place_backing.get();
  if (backing == nullptr) return v;
  if (v.kind() == ValueKind::kTensor && v.as_tensor().owner().get() == backing)
    return Value(v.as_tensor().copy_to(v.as_tensor().device()));
  if (v.kind() == ValueKind::kArray) {
    std::vector<Value> items;
    for (const Value& item : v.as_array()) items.push_back(to_caller(item));
    return Value(std::move(items));
  }
  return v;
}

Value VirtualMachineNode::invoke(const std::string& name, Args args) {
  if (auto it = saved_.find(name); it != saved_.end()) return to_caller(call_value(it->second, args));
  int64_t index = exec_->find_function(name);
  if (index < 0) value_error("VirtualMachine: no function named '", name, "'");
  return invoke_function(index, args);
}

namespace {

// Arguments for stateful calls live on the VM's first device.
Value to_device(const Value& v, Device dev, Allocator* alloc) {
  if (v.kind() == ValueKind::kTensor && !(v.as_tensor().device() == dev)) return Value(v.as_tensor().copy_to(dev, alloc));
  if (v.kind() == ValueKind::kArray) {
    std::vector<Value> items;
    for (const Value& item : v.as_array()) items.push_back(to_device(item, dev, alloc));
    return Value(std::move(items));
  }
  return v;
}

}  // namespace

void VirtualMachineNode::set_input(const std::string& name, Args args) {
  int64_t index = exec_->find_function(name);
  if (index < 0 || exec_->func_table[static_cast<size_t>(index)].kind != FuncKind::kVMFunc)
    value_error("set_input: no vm function named '", name, "'");
  const FuncInfo& info = exec_->func_table[static_cast<size_t>(index)];
  if (static_cast<int64_t>(args.size()) != info.num_args) arity_error(info, args.size());
  std::vector<Value> inputs;
  for (const Value& a : args) inputs.push_back(to_device(a, devices_[0], allocators_[0]));
  inputs_[name] = std::move(inputs);
}

Value VirtualMachineNode::invoke_stateful(const std::string& name) {
  auto it = inputs_.find(name);
  if (it == inputs_.end()) value_error("invoke_stateful: no inputs set for '", name, "' (call set_input first)");
  Value out = invoke(name, it->second);
  outputs_[name] = out;
  return out;
}

Value VirtualMachineNode::get_output(const std::string& name) const {
  auto it = outputs_.find(name);
  if (it == outputs_.end()) value_error("get_output: no output for '", name, "' (call invoke_stateful first)");
  return it->second;
}

void VirtualMachineNode::save_function(const std::string& name, const std::string& saved_name, Args args) {
  int64_t index = exec_->find_function(name);
  if (index < 0) value_error("save_function: no function named '", name, "'");
  auto closure = make_object<ClosureNode>();
  closure->name = saved_name;
  const Value& target = func_pool_[static_cast<size_t>(index)];
  if (target.kind() == ValueKind::kFunction) closure->packed = target.as_function();
  else closure->func_index = index;
  for (const Value& a : args) closure->captured.push_back(to_device(a, devices_[0], allocators_[0]));
  saved_[saved_name] = Value::object(closure);
}

std::vector<std::string> VirtualMachineNode::list_functions() const {
  std::vector<std::string> names = exec_->list_functions();
  for (const auto& [name, value] : saved_) names.push_back(name);
  return names;
}

std::optional<Function> VirtualMachineNode::get_local_function(const std::string& name) {
  Ref<VirtualMachineNode> self(this);
  auto rest = [](Args args, size_t skip) { return Args(args.data() + skip, args.size() - skip); };
  auto need = [name](Args args, size_t n) {
    if (args.size() < n) type_error("vm.", name, " expects at least ", n, " argument", n == 1 ? "" : "s");
  };
  if (name == "invoke_closure")
    return Function::from_packed([self, need, rest](Args a) { need(a, 1); return self->invoke_closure(a[0], rest(a, 1)); }, name);
  if (name == "set_input")
    return Function::from_packed([self, need, rest](Args a) { need(a, 1); self->set_input(a[0].as_string(), rest(a, 1)); return Value(); }, name);
  if (name == "invoke_stateful")
    return Function::from_typed([self](const std::string& f) { return self->invoke_stateful(f); }, name);
  if (name == "get_output")
    return Function::from_typed([self](const std::string& f) { return self->get_output(f); }, name);
  if (name == "save_function")
    return Function::from_packed([self, need, rest](Args a) {
      need(a, 2);
      self->save_function(a[0].as_string(), a[1].as_string(), rest(a, 2));
      return Value();
    }, name);
  if (name == "get_function_arity")
    return Function::from_typed([self](const std::string& f) {
      int64_t i = self->exec_->find_function(f);
      if (i < 0) value_error("get_function_arity: no function named '", f, "'");
      return self->exec_->func_table[static_cast<size_t>(i)].num_args;
    }, name);
  if (name == "get_function_param_name")
    return Function::from_typed([self](const std::string& f, int64_t k) {
      int64_t i = self->exec_->find_function(f);
      if (i < 0) value_error("get_function_param_name: no function named '", f, "'");
      const auto& params = self->exec_->func_table[static_cast<size_t>(i)].param_names;
      if (k < 0 || k >= static_cast<int64_t>(params.size())) index_error("parameter index ", k, " out of range");
      return params[static_cast<size_t>(k)];
    }, name);
  // VM functions and saved functions by name.
  if (saved_.count(name)) return Function::from_packed([self, name](Args a) { return self->invoke(name, a); }, name);
  if (int64_t index = exec_->find_function(name); index >= 0)  // resolved once, not per call
    return Function::from_packed([self, index](Args a) { return self->invoke_function(index, a); }, name);
  // Methods other files add (profile, time_evaluator) as global functions "vm.method.<name>"
  // taking the VM module first.
  if (auto method = Registry::find("vm.method." + name)) {
    Function m = *method;
    return Function::from_packed([self, m](Args a) {
      std::vector<Value> all{Value(Module(Ref<ModuleNode>(self.get())))};
      all.insert(all.end(), a.begin(), a.end());
      return m.call(all);
    }, name);
  }
  return std::nullopt;
}

VirtualMachine VirtualMachine::create(const Module& module, std::vector<Device> devices, MemoryConfig memory) {
  return VirtualMachine(make_object<VirtualMachineNode>(Executable::from_module(module), std::move(devices), memory));
}

VirtualMachineNode* vm_from_value(const Value& value) {
  if (value.kind() == ValueKind::kModule) {
    auto* vm = dynamic_cast<VirtualMachineNode*>(value.as_module().node());
    if (vm) return vm;
  }
  // The %vm register: a raw handle that only the interpreter produces, for a VM running here.
  if (value.kind() == ValueKind::kHandle) {
    for (const VirtualMachineNode* vm : t_running)
      if (vm == value.as_handle()) return const_cast<VirtualMachineNode*>(vm);
    type_error("expected the VM (pass Arg::vm()) but got a handle that is not a VM running on this thread");
  }
  type_error("expected the VM (pass Arg::vm()) but got a ", value.kind_name());
}

}  // namespace anvil::vm
