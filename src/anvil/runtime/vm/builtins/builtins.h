// The VM's builtins (vm.builtin.*): storage and tensor allocation (storage.cc), the shape heap
// and shape/type checks (shape.cc), and data movement, tuples, closures and scalar helpers
// (data.cc). All semantics of a VM program live here; the interpreter only calls them.
//
// This header holds what the three files share: the Storage object and the argument helpers
// that turn a bad argument into an error naming the builtin, the argument and what was
// expected. Every builtin error is an anvil::Error of kind value, type or index.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/memory/allocator.h"
#include "anvil/runtime/tensor.h"
#include "anvil/runtime/value.h"
#include "anvil/runtime/vm/vm.h"

namespace anvil::vm {

inline constexpr const char* kStorageTypeKey = "vm.Storage";

// A block of device memory from an Allocator, which tensors are carved out of
// (vm.builtin.alloc_tensor). The block goes back to its allocator when the last reference
// goes; tensors made by alloc_tensor hold a reference, so a storage outlives its register.
class StorageNode final : public Object {
 public:
  StorageNode(Allocator* allocator, MemoryBlock block) : allocator_(allocator), block_(block) {}
  ~StorageNode() override { allocator_->free(block_); }
  std::string_view type_key() const override { return kStorageTypeKey; }

  Allocator* allocator() const { return allocator_; }
  Device device() const { return block_.device; }
  // The size that was asked for; tensors must fit in it (not in the allocator's rounding).
  size_t nbytes() const { return block_.nbytes; }
  void* data() const { return block_.data; }

  // A compact tensor at byte `offset`; ValueError (naming `op`) when it does not fit or the
  // offset is not a multiple of the element size.
  Tensor alloc_tensor(int64_t offset, const std::vector<int64_t>& shape, DataType dtype,
                      std::string_view op = "vm.Storage.alloc_tensor");

 private:
  Allocator* allocator_;
  MemoryBlock block_;
};

// Registers every vm.builtin.*; called once from register_vm_functions().
void register_builtins();
void register_storage_builtins();  // storage.cc
void register_shape_builtins();    // shape.cc
void register_data_builtins();     // data.cc
void register_loop_builtins();     // loop.cc (what the bytecode of a graph loop calls)
void register_data_dependent_builtins();  // data_dependent.cc (nonzero, dynamic_slice)

// ---- Argument helpers -------------------------------------------------------------------------

// TypeError "<builtin>: expected 4 arguments (signature) but got 3".
inline void check_num_args(std::string_view builtin, Args args, size_t expected, std::string_view signature) {
  if (args.size() != expected)
    type_error(builtin, ": expected ", expected, " arguments (", signature, ") but got ", args.size());
}
inline void check_min_args(std::string_view builtin, Args args, size_t at_least, std::string_view signature) {
  if (args.size() < at_least)
    type_error(builtin, ": expected at least ", at_least, " arguments (", signature, ") but got ", args.size());
}

// Runs `convert(args[index])`, rewording any error as "<builtin>: argument 2 (offset): <cause>"
// so the accessor's "expected int but got string" names where it happened.
template <typename F>
auto convert_arg(std::string_view builtin, Args args, size_t index, std::string_view name, F&& convert)
    -> decltype(convert(args[index])) {
  try {
    return convert(args[index]);
  } catch (const Error& e) {
    throw Error(e.kind(), str_cat(builtin, ": argument ", index, " (", name, "): ", e.what()));
  }
}

inline int64_t int_arg(std::string_view builtin, Args args, size_t index, std::string_view name) {
  return convert_arg(builtin, args, index, name, [](const Value& v) { return v.as_int(); });
}
inline Tensor tensor_arg(std::string_view builtin, Args args, size_t index, std::string_view name) {
  return convert_arg(builtin, args, index, name, [](const Value& v) { return v.as_tensor(); });
}
// A reference into args[index]; valid for the call.
inline const std::vector<int64_t>& shape_arg(std::string_view builtin, Args args, size_t index, std::string_view name) {
  return convert_arg(builtin, args, index, name,
                     [](const Value& v) -> const std::vector<int64_t>& { return v.as_shape(); });
}
inline const std::string& string_arg(std::string_view builtin, Args args, size_t index, std::string_view name) {
  return convert_arg(builtin, args, index, name, [](const Value& v) -> const std::string& { return v.as_string(); });
}
// A DataType or its name ("float32").
inline DataType dtype_arg(std::string_view builtin, Args args, size_t index, std::string_view name) {
  return convert_arg(builtin, args, index, name, [](const Value& v) { return v.as_dtype(); });
}
inline VirtualMachineNode* vm_arg(std::string_view builtin, Args args, size_t index) {
  return convert_arg(builtin, args, index, "vm", [](const Value& v) { return vm_from_value(v); });
}

// Element count of `shape`; ValueError naming `op` for a negative dimension or an overflow.
inline int64_t checked_numel(std::string_view op, const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) value_error(op, ": dimension ", i, " of shape ", shape_to_string(shape), " is negative");
    if (shape[i] != 0 && n > std::numeric_limits<int64_t>::max() / shape[i])
      value_error(op, ": shape ", shape_to_string(shape), " has too many elements");
    n *= shape[i];
  }
  return n;
}

// Checks a device index of `vm` (-1 = the host) and returns it; ValueError otherwise.
inline int64_t device_index_arg(std::string_view builtin, Args args, size_t index, const VirtualMachineNode* vm) {
  int64_t device_index = int_arg(builtin, args, index, "device_index");
  auto num_devices = static_cast<int64_t>(vm->devices().size());
  if (device_index < -1 || device_index >= num_devices)
    value_error(builtin, ": argument ", index, " (device_index): expected -1 (the host) or an index below ",
                num_devices, " (the VM's devices) but got ", device_index);
  return device_index;
}

}  // namespace anvil::vm
