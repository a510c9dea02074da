// Data builtins: register moves (copy), device copies (to_device), tuples (make_tuple,
// tuple_getitem), branch conditions (read_if_cond), run-time assertions (check), closures (make_closure, invoke_closure),
// kernel calls with symbolic sizes (call_tir_dyn), and small int helpers (add, sub, mul, lt,
// eq) that let hand-written and test programs count loops and recurse.
#include <cstring>

#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"

namespace anvil::vm {
namespace {

constexpr const char* kCopy = "vm.builtin.copy";
constexpr const char* kToDevice = "vm.builtin.to_device";
constexpr const char* kMakeTuple = "vm.builtin.make_tuple";
constexpr const char* kTupleGetItem = "vm.builtin.tuple_getitem";
constexpr const char* kReadIfCond = "vm.builtin.read_if_cond";
constexpr const char* kCheck = "vm.builtin.check";
constexpr const char* kMakeClosure = "vm.builtin.make_closure";
constexpr const char* kInvokeClosure = "vm.builtin.invoke_closure";
constexpr const char* kCallTirDyn = "vm.builtin.call_tir_dyn";
constexpr const char* kClosureTypeKey = "vm.Closure";

// Value description for messages: "int (3)", "null".
std::string describe(const Value& v) {
  return v.is_null() ? std::string("null") : str_cat(v.kind_name(), " (", v.to_string(), ")");
}

// The ClosureNode inside `v`, or nullptr when `v` holds something else.
ClosureNode* as_closure(const Value& v) {
  Object* obj = v.object_ptr();
  if (v.kind() != ValueKind::kObject || obj == nullptr || obj->type_key() != kClosureTypeKey) return nullptr;
  return static_cast<ClosureNode*>(obj);
}

// to_device(vm, tensor, device_index) -> a copy on that device, from its allocator
Value to_device(Args args) {
  check_num_args(kToDevice, args, 3, "vm, tensor, device_index");
  VirtualMachineNode* vm = vm_arg(kToDevice, args, 0);
  Tensor t = tensor_arg(kToDevice, args, 1, "tensor");
  int64_t device_index = device_index_arg(kToDevice, args, 2, vm);
  return Value(t.copy_to(vm->device(device_index), vm->allocator(device_index)));
}

// tuple_getitem(array, index)
Value tuple_getitem(Args args) {
  check_num_args(kTupleGetItem, args, 2, "tuple, index");
  const std::vector<Value>& items = convert_arg(
      kTupleGetItem, args, 0, "tuple", [](const Value& v) -> const std::vector<Value>& { return v.as_array(); });
  int64_t index = int_arg(kTupleGetItem, args, 1, "index");
  if (index < 0 || index >= static_cast<int64_t>(items.size()))
    index_error(kTupleGetItem, ": index ", index, " is out of range for a tuple of ", items.size(), " items");
  return items[static_cast<size_t>(index)];
}

// read_if_cond(x) -> bool, from a bool/int or a one-element integer/bool tensor
Value read_if_cond(Args args) {
  check_num_args(kReadIfCond, args, 1, "condition");
  const Value& x = args[0];
  if (x.kind() == ValueKind::kBool || x.kind() == ValueKind::kInt) return Value(x.as_bool());
  if (x.kind() != ValueKind::kTensor)
    type_error(kReadIfCond, ": argument 0 (condition): expected a bool, an int or a tensor but got ", describe(x));
  Tensor t = x.as_tensor();
  DataType dtype = t.dtype();
  if (!(dtype.is_int() || dtype.is_uint() || dtype.is_bool()) || dtype.lanes() != 1)
    type_error(kReadIfCond, ": argument 0 (condition): expected an integer or bool tensor but got ", t.to_string());
  if (t.numel() != 1)
    value_error(kReadIfCond, ": argument 0 (condition): expected a tensor of one element but got ", t.to_string());
  // A device condition comes back to the host to be read.
  if (t.device().type != kDLCPU) t = t.copy_to(Device::cpu());
  // Every integer type is zero exactly when all its bytes are.
  unsigned char bytes[8] = {};
  std::memcpy(bytes, t.data(), dtype.bytes());
  bool nonzero = false;
  for (size_t i = 0; i < dtype.bytes(); ++i) nonzero = nonzero || bytes[i] != 0;
  return Value(nonzero);
}

// A few of an integer (or float32/float64) tensor's values for a message: "[0, -4]", "[1, -0.5]"
// (other dtypes: its description).
std::string int_values_text(const Tensor& host) {
  DataType d = host.dtype();
  const bool is_float = d.is_float() && (d.bytes() == 4 || d.bytes() == 8);
  if (!(is_float || ((d.is_int() || d.is_uint()) && (d.bytes() == 4 || d.bytes() == 8))) || d.lanes() != 1)
    return host.to_string();
  std::string out = "[";
  for (int64_t i = 0; i < host.numel() && i < 16; ++i) {
    const auto* p = static_cast<const unsigned char*>(host.data()) + static_cast<size_t>(i) * d.bytes();
    if (is_float) {  // Resize's run-time scales
      double f = 0;
      if (d.bytes() == 8) std::memcpy(&f, p, 8);
      else {
        float g = 0;
        std::memcpy(&g, p, 4);
        f = g;
      }
      out += str_cat(i ? ", " : "", f);
      continue;
    }
    int64_t v = 0;
    if (d.bytes() == 8) std::memcpy(&v, p, 8);
    else {
      int32_t w = 0;
      std::memcpy(&w, p, 4);
      v = w;
    }
    out += str_cat(i ? ", " : "", v);
  }
  return out + (host.numel() > 16 ? ", ...]" : "]");
}

// check(x, ok, message) -> a copy of x (a value of its own: the memory plan sees a new value),
// when every element of the bool tensor ok is true; else ValueError "<message>; got <x>".
Value check(Args args) {
  check_num_args(kCheck, args, 3, "x, ok, message");
  Tensor x = tensor_arg(kCheck, args, 0, "x");
  Tensor ok = tensor_arg(kCheck, args, 1, "ok");
  const std::string& message = string_arg(kCheck, args, 2, "message");
  if (!ok.dtype().is_bool()) type_error(kCheck, ": argument 1 (ok): expected a bool tensor but got ", ok.to_string());
  if (ok.device().type != kDLCPU || !ok.is_contiguous()) ok = ok.copy_to(Device::cpu());
  Tensor host = x.device().type == kDLCPU && x.is_contiguous() ? x : x.copy_to(Device::cpu());
  const auto* bits = static_cast<const unsigned char*>(ok.data());
  for (int64_t i = 0; i < ok.numel(); ++i)
    if (bits[i] == 0) value_error(message, "; got ", int_values_text(host));
  return Value(x.copy_to(x.device()));
}

// make_closure(func, captured...) -> a vm.Closure that appends `captured` to its call's arguments
Value make_closure(Args args) {
  check_min_args(kMakeClosure, args, 1, "func, captured...");
  auto node = make_object<ClosureNode>();
  const Value& func = args[0];
  std::vector<Value> inherited;
  if (func.kind() == ValueKind::kFunction) {
    node->packed = func.as_function();
    node->name = node->packed.name();
  } else if (ClosureNode* inner = as_closure(func)) {
    node->name = inner->name;
    node->func_index = inner->func_index;
    node->packed = inner->packed;
    inherited = inner->captured;
  } else {
    type_error(kMakeClosure, ": argument 0 (func): expected a function or a vm.Closure but got ", describe(func));
  }
  // Closing over a closure: the new arguments come before the ones it already binds, since
  // calling it appends ours and then the inner closure appends its own.
  node->captured.assign(args.begin() + 1, args.end());
  node->captured.insert(node->captured.end(), inherited.begin(), inherited.end());
  return Value::object(node);
}

// invoke_closure(vm, closure, args...) -> result
Value invoke_closure(Args args) {
  check_min_args(kInvokeClosure, args, 2, "vm, closure, args...");
  VirtualMachineNode* vm = vm_arg(kInvokeClosure, args, 0);
  if (args[1].kind() != ValueKind::kFunction && as_closure(args[1]) == nullptr)
    type_error(kInvokeClosure, ": argument 1 (closure): expected a function or a vm.Closure but got ",
               describe(args[1]));
  return vm->invoke_closure(args[1], args.subspan(2));
}

// call_tir_dyn(func, args..., shape) -> func(args..., shape[0], shape[1], ...)
Value call_tir_dyn(Args args) {
  check_min_args(kCallTirDyn, args, 2, "func, args..., shape");
  Function func = convert_arg(kCallTirDyn, args, 0, "func", [](const Value& v) { return v.as_function(); });
  const std::vector<int64_t>& dims = shape_arg(kCallTirDyn, args, args.size() - 1, "shape");
  std::vector<Value> call_args(args.begin() + 1, args.end() - 1);
  call_args.insert(call_args.end(), dims.begin(), dims.end());
  return func.call(call_args);
}

// Test/utility helpers: int arithmetic and comparisons, so that hand-built programs can loop
// and recurse. Overflow is a ValueError rather than wrapping silently.
template <typename Op>
void register_int_op(const std::string& name, Op op) {
  register_function(name, [name, op](int64_t a, int64_t b) {
    int64_t out = 0;
    if (op(a, b, &out)) value_error(name, ": ", a, " and ", b, " overflow int64");
    return out;
  });
}

}  // namespace

void register_data_builtins() {
  register_packed(kCopy, [](Args args) -> Value {
    check_num_args(kCopy, args, 1, "value");
    return args[0];
  });
  register_packed(kToDevice, to_device);
  register_packed(kMakeTuple, [](Args args) -> Value { return Value(std::vector<Value>(args.begin(), args.end())); });
  register_packed(kTupleGetItem, tuple_getitem);
  register_packed(kReadIfCond, read_if_cond);
  register_packed(kCheck, check);
  register_packed(kMakeClosure, make_closure);
  register_packed(kInvokeClosure, invoke_closure);
  register_packed(kCallTirDyn, call_tir_dyn);

  register_int_op("vm.builtin.add",
                  [](int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); });
  register_int_op("vm.builtin.sub",
                  [](int64_t a, int64_t b, int64_t* out) { return __builtin_sub_overflow(a, b, out); });
  register_int_op("vm.builtin.mul",
                  [](int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); });
  register_function("vm.builtin.lt", [](int64_t a, int64_t b) { return a < b; });
  register_function("vm.builtin.eq", [](int64_t a, int64_t b) { return a == b; });
}

}  // namespace anvil::vm
