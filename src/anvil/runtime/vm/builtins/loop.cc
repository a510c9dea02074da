// Loop builtins: what the bytecode of a graph `loop` (vm_codegen) reads and builds each
// iteration — whether to go on, the iteration number as the body's 0-d tensor, and the scan
// outputs: per-iteration tensors collected in an array, stacked once the loop is done.
#include <cstring>

#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"

namespace anvil::vm {
namespace {

constexpr const char* kLoopContinue = "vm.builtin.loop_continue";
constexpr const char* kIterTensor = "vm.builtin.iteration_tensor";
constexpr const char* kListAppend = "vm.builtin.list_append";
constexpr const char* kStack = "vm.builtin.stack_tensors";

// The one element of a 0-d (or one-element) integer/bool tensor, read on the host.
int64_t scalar_of(std::string_view builtin, Args args, size_t index, std::string_view name) {
  Tensor t = tensor_arg(builtin, args, index, name);
  DataType dtype = t.dtype();
  if (!(dtype.is_int() || dtype.is_uint() || dtype.is_bool()) || t.numel() != 1)
    type_error(builtin, ": argument ", index, " (", name, "): expected a one-element integer or bool tensor but got ",
               t.to_string());
  if (t.device().type != kDLCPU) t = t.copy_to(Device::cpu());
  if (dtype.is_bool() || dtype.bytes() == 1) return *static_cast<const uint8_t*>(t.data()) != 0 ? 1 : 0;
  int64_t v = 0;
  if (dtype.bytes() == 8) std::memcpy(&v, t.data(), 8);
  else if (dtype.bytes() == 4) v = *static_cast<const int32_t*>(t.data());
  else if (dtype.bytes() == 2) v = *static_cast<const int16_t*>(t.data());
  return v;
}

// loop_continue(iteration: int, max_trip: tensor, cond: tensor) -> iteration < max_trip && cond
Value loop_continue(Args args) {
  check_num_args(kLoopContinue, args, 3, "iteration, max_trip, cond");
  int64_t i = int_arg(kLoopContinue, args, 0, "iteration");
  return Value(i < scalar_of(kLoopContinue, args, 1, "max_trip") && scalar_of(kLoopContinue, args, 2, "cond") != 0);
}

// iteration_tensor(i: int) -> Tensor[(), int64] holding i (the body's iteration input)
Value iteration_tensor(Args args) {
  check_num_args(kIterTensor, args, 1, "iteration");
  int64_t i = int_arg(kIterTensor, args, 0, "iteration");
  Tensor t = Tensor::empty(std::initializer_list<int64_t>{}, DataType::int64());
  std::memcpy(t.data(), &i, sizeof i);
  return Value(t);
}

// list_append(list: array, tuple: array, index: int) -> list with tuple[index] appended
Value list_append(Args args) {
  check_num_args(kListAppend, args, 3, "list, tuple, index");
  std::vector<Value> items = convert_arg(kListAppend, args, 0, "list",
                                         [](const Value& v) -> const std::vector<Value>& { return v.as_array(); });
  const std::vector<Value>& tuple = convert_arg(
      kListAppend, args, 1, "tuple", [](const Value& v) -> const std::vector<Value>& { return v.as_array(); });
  int64_t index = int_arg(kListAppend, args, 2, "index");
  if (index < 0 || index >= static_cast<int64_t>(tuple.size()))
    index_error(kListAppend, ": index ", index, " is out of range for a tuple of ", tuple.size(), " items");
  items.push_back(tuple[static_cast<size_t>(index)]);
  return Value(std::move(items));
}

// stack_tensors(list: array of tensors, dtype, empty_shape: Shape) -> their stack on a new axis 0
// (all of one shape and dtype); an empty list gives a tensor of shape (0, empty_shape...).
Value stack_tensors(Args args) {
  check_num_args(kStack, args, 3, "list, dtype, empty_shape");
  const std::vector<Value>& items = convert_arg(
      kStack, args, 0, "list", [](const Value& v) -> const std::vector<Value>& { return v.as_array(); });
  DataType dtype = dtype_arg(kStack, args, 1, "dtype");
  std::vector<int64_t> shape{static_cast<int64_t>(items.size())};
  if (items.empty()) {
    const std::vector<int64_t>& rest = shape_arg(kStack, args, 2, "empty_shape");
    shape.insert(shape.end(), rest.begin(), rest.end());
    return Value(Tensor::empty(shape, dtype));
  }
  std::vector<Tensor> parts;
  for (size_t k = 0; k < items.size(); ++k) {
    Tensor t = convert_arg(kStack, args, 0, "list", [&](const Value&) { return items[k].as_tensor(); });
    if (t.dtype() != dtype || t.shape() != items[0].as_tensor().shape())
      value_error(kStack, ": element ", k, " is ", t.to_string(), " but element 0 is ", items[0].as_tensor().to_string(),
                  " (every iteration must give one shape and dtype ", dtype.to_string(), ")");
    if (t.device().type != kDLCPU || !t.is_contiguous()) t = t.copy_to(Device::cpu());
    parts.push_back(std::move(t));
  }
  shape.insert(shape.end(), parts[0].shape().begin(), parts[0].shape().end());
  Tensor out = Tensor::empty(shape, dtype);
  size_t bytes = parts[0].nbytes();
  for (size_t k = 0; k < parts.size(); ++k)
    if (bytes != 0) std::memcpy(static_cast<char*>(out.data()) + k * bytes, parts[k].data(), bytes);
  return Value(out);
}

}  // namespace

void register_loop_builtins() {
  register_packed(kLoopContinue, loop_continue);
  register_packed(kIterTensor, iteration_tensor);
  register_packed(kListAppend, list_append);
  register_packed(kStack, stack_tensors);
}

}  // namespace anvil::vm
