// Storage and tensor allocation builtins: vm.builtin.alloc_storage, alloc_tensor,
// alloc_tensor_on, null_value and storage_bytes. A memory-planned program allocates a few
// storages and carves its tensors out of them; an unplanned one asks for each tensor directly.
#include <algorithm>
#include <bit>
#include <limits>
#include <memory>

#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"

namespace anvil::vm {
namespace {

constexpr const char* kAllocStorage = "vm.builtin.alloc_storage";
constexpr const char* kAllocTensor = "vm.builtin.alloc_tensor";
constexpr const char* kAllocTensorOn = "vm.builtin.alloc_tensor_on";
constexpr const char* kNullValue = "vm.builtin.null_value";
constexpr const char* kStorageBytes = "vm.builtin.storage_bytes";

void check_tensor_dtype(std::string_view op, DataType dtype) {
  if (!dtype.is_tensor_element())
    value_error(op, ": a tensor cannot hold elements of type ", dtype,
                " (expected bool, int8-64, uint8-64, float16/32/64 or bfloat16)");
}

Ref<StorageNode> storage_arg(std::string_view builtin, Args args, size_t index) {
  return convert_arg(builtin, args, index, "storage", [](const Value& v) {
    Object* obj = v.object_ptr();
    if (v.kind() != ValueKind::kObject || obj == nullptr || obj->type_key() != kStorageTypeKey)
      type_error("expected a ", kStorageTypeKey, " but got ", v.kind_name(),
                 v.is_null() ? "" : " (" + v.to_string() + ")");
    return Ref<StorageNode>(static_cast<StorageNode*>(obj));
  });
}

// alloc_storage(vm, size_bytes: int or Shape [n], device_index, dtype_hint) -> vm.Storage
Value alloc_storage(Args args) {
  check_num_args(kAllocStorage, args, 4, "vm, size_bytes, device_index, dtype_hint");
  VirtualMachineNode* vm = vm_arg(kAllocStorage, args, 0);
  int64_t size = 0;
  if (args[1].kind() == ValueKind::kShape) {
    // The graph compiler hands sizes over as 1-d shapes, TVM's convention.
    const std::vector<int64_t>& dims = args[1].as_shape();
    if (dims.size() != 1)
      value_error(kAllocStorage, ": argument 1 (size_bytes): expected an int or a 1-d shape but got shape",
                  shape_to_string(dims));
    size = dims[0];
  } else {
    size = int_arg(kAllocStorage, args, 1, "size_bytes");
  }
  if (size < 0) value_error(kAllocStorage, ": argument 1 (size_bytes): expected a size >= 0 but got ", size);
  int64_t device_index = device_index_arg(kAllocStorage, args, 2, vm);
  // The hint only raises the alignment: wide vector types want their natural alignment.
  size_t alignment = kAllocAlignment;
  if (!args[3].is_null()) {
    DataType hint = dtype_arg(kAllocStorage, args, 3, "dtype_hint");
    alignment = std::max(alignment, std::bit_ceil(hint.bytes()));
  }
  Allocator* allocator = vm->allocator(device_index);
  MemoryBlock block = allocator->alloc(static_cast<size_t>(size), alignment);
  return Value::object(make_object<StorageNode>(allocator, block));
}

// alloc_tensor(storage, offset, shape, dtype) -> Tensor viewing the storage
Value alloc_tensor(Args args) {
  check_num_args(kAllocTensor, args, 4, "storage, offset, shape, dtype");
  Ref<StorageNode> storage = storage_arg(kAllocTensor, args, 0);
  int64_t offset = int_arg(kAllocTensor, args, 1, "offset");
  const std::vector<int64_t>& shape = shape_arg(kAllocTensor, args, 2, "shape");
  DataType dtype = dtype_arg(kAllocTensor, args, 3, "dtype");
  return Value(storage->alloc_tensor(offset, shape, dtype, kAllocTensor));
}

// alloc_tensor_on(vm, shape, dtype, device_index) -> a fresh Tensor from that device's allocator
Value alloc_tensor_on(Args args) {
  check_num_args(kAllocTensorOn, args, 4, "vm, shape, dtype, device_index");
  VirtualMachineNode* vm = vm_arg(kAllocTensorOn, args, 0);
  const std::vector<int64_t>& shape = shape_arg(kAllocTensorOn, args, 1, "shape");
  DataType dtype = dtype_arg(kAllocTensorOn, args, 2, "dtype");
  int64_t device_index = device_index_arg(kAllocTensorOn, args, 3, vm);
  check_tensor_dtype(kAllocTensorOn, dtype);
  checked_numel(kAllocTensorOn, shape);
  return Value(Tensor::empty(shape, dtype, vm->device(device_index), vm->allocator(device_index)));
}

}  // namespace

Tensor StorageNode::alloc_tensor(int64_t offset, const std::vector<int64_t>& shape, DataType dtype,
                                 std::string_view op) {
  check_tensor_dtype(op, dtype);
  int64_t numel = checked_numel(op, shape);
  auto elem = static_cast<int64_t>(dtype.bytes());
  if (offset < 0) value_error(op, ": offset must be >= 0 but got ", offset);
  if (offset % elem != 0)
    value_error(op, ": offset ", offset, " is not a multiple of the ", elem, "-byte size of ", dtype);
  auto capacity = static_cast<int64_t>(block_.nbytes);
  if (numel > std::numeric_limits<int64_t>::max() / elem)
    value_error(op, ": a tensor of shape ", shape_to_string(shape), " and dtype ", dtype, " is too large");
  if (offset > capacity || numel * elem > capacity - offset)
    value_error(op, ": a tensor of shape ", shape_to_string(shape), " and dtype ", dtype, " at offset ", offset,
                " needs ", offset, " + ", numel * elem, " bytes but the storage holds ", capacity, " bytes");
  // The tensor's owner holds a reference to this storage: the block is freed only after both
  // the storage register and every tensor view are gone.
  Ref<StorageNode> self(this);
  std::shared_ptr<void> owner(block_.data, [self](void*) {});
  return Tensor::wrap(block_.data, shape, dtype, block_.device, std::move(owner), {}, static_cast<uint64_t>(offset));
}

void register_storage_builtins() {
  register_packed(kAllocStorage, alloc_storage);
  register_packed(kAllocTensor, alloc_tensor);
  register_packed(kAllocTensorOn, alloc_tensor_on);
  register_packed(kNullValue, [](Args args) -> Value {
    check_num_args(kNullValue, args, 0, "no arguments");
    return Value();
  });
  register_packed(kStorageBytes, [](Args args) -> Value {
    check_num_args(kStorageBytes, args, 1, "storage");
    return Value(static_cast<int64_t>(storage_arg(kStorageBytes, args, 0)->nbytes()));
  });
}

void register_builtins() {
  register_storage_builtins();
  register_shape_builtins();
  register_data_builtins();
  register_loop_builtins();
  register_data_dependent_builtins();
}

}  // namespace anvil::vm
