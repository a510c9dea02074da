// Shape builtins: the shape heap that holds a function's symbolic dimensions (alloc_shape_heap,
// match_shape, make_shape, shape_compute), argument checks (check_tensor_info) and shape
// queries and views (reshape, shape_of, tensor_to_shape, reshape_target, range_length).
//
// A heap is an int64 CPU tensor with one slot per symbolic expression. match_shape fills slots
// from the arguments and checks the rest against them; shape_compute derives n*2, n+1,
// ceildiv(n, 4) and the like; make_shape turns slots into Shapes for allocations and kernels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "anvil/base/int_math.h"
#include "anvil/runtime/registry.h"
#include "anvil/runtime/vm/builtins/builtins.h"

namespace anvil::vm {
namespace {

constexpr const char* kAllocShapeHeap = "vm.builtin.alloc_shape_heap";
constexpr const char* kMatchShape = "vm.builtin.match_shape";
constexpr const char* kMakeShape = "vm.builtin.make_shape";
constexpr const char* kShapeCompute = "vm.builtin.shape_compute";
constexpr const char* kCheckTensorInfo = "vm.builtin.check_tensor_info";
constexpr const char* kReshape = "vm.builtin.reshape";
constexpr const char* kShapeOf = "vm.builtin.shape_of";
constexpr const char* kTensorToShape = "vm.builtin.tensor_to_shape";
constexpr const char* kReshapeTarget = "vm.builtin.reshape_target";
constexpr const char* kRangeLength = "vm.builtin.range_length";

// match_shape codes.
constexpr int64_t kAssertEqualToImm = 0;
constexpr int64_t kStoreToHeap = 1;
constexpr int64_t kNoOp = 2;
constexpr int64_t kAssertEqualToLoad = 3;
// make_shape / shape_compute operand codes.
constexpr int64_t kUseImm = 0;
constexpr int64_t kLoadHeap = 1;

// A view of the heap's slots. The heap argument may be null when every code is immediate.
class Heap {
 public:
  Heap(std::string_view builtin, Args args, size_t index) : builtin_(builtin) {
    if (args[index].is_null()) return;
    Tensor t = tensor_arg(builtin, args, index, "heap");
    if (!(t.dtype() == DataType::int64()) || t.ndim() != 1 || t.device().type != kDLCPU || !t.is_contiguous())
      value_error(builtin, ": argument ", index, " (heap): expected a 1-d int64 CPU tensor but got ", t.to_string());
    data_ = static_cast<int64_t*>(t.data());
    size_ = t.shape()[0];
  }
  int64_t& at(int64_t slot) const {
    if (data_ == nullptr) value_error(builtin_, ": heap slot ", slot, " is used but no shape heap was given");
    if (slot < 0 || slot >= size_)
      value_error(builtin_, ": heap slot ", slot, " is out of range for a heap of ", size_, " slots");
    return data_[slot];
  }

 private:
  std::string_view builtin_;
  int64_t* data_ = nullptr;
  int64_t size_ = 0;
};

// An operand of make_shape / shape_compute: an immediate or a heap slot.
int64_t load_operand(std::string_view builtin, const Heap& heap, int64_t code, int64_t value, size_t code_index) {
  if (code == kUseImm) return value;
  if (code == kLoadHeap) return heap.at(value);
  value_error(builtin, ": argument ", code_index, " (code): expected 0 (immediate) or 1 (heap slot) but got ", code);
}

// Reads "n" at `index` and checks that `fixed` arguments plus n (code, value) pairs were given.
int64_t num_pairs_arg(std::string_view builtin, Args args, size_t index, size_t fixed, std::string_view signature) {
  int64_t n = int_arg(builtin, args, index, "n");
  if (n < 0 || args.size() != fixed + 2 * static_cast<size_t>(n))
    type_error(builtin, ": expected ", fixed, " + 2 * n arguments (", signature, ") with n = ", n, " but got ",
               args.size());
  return n;
}

// What an error is about: the caller's context ("main: argument x"), else the builtin.
std::string_view context(std::string_view builtin, const std::string& err_ctx) {
  return err_ctx.empty() ? builtin : std::string_view(err_ctx);
}

// match_shape(input, heap, n, code_0, value_0, ..., err_ctx)
Value match_shape(Args args) {
  constexpr const char* kSignature = "input, heap, n, code_0, value_0, ..., err_ctx";
  check_min_args(kMatchShape, args, 4, kSignature);
  int64_t n = num_pairs_arg(kMatchShape, args, 2, 4, kSignature);
  const std::string& err_ctx = string_arg(kMatchShape, args, args.size() - 1, "err_ctx");
  std::string_view where = context(kMatchShape, err_ctx);
  const Value& input = args[0];
  std::vector<int64_t> dims;
  if (input.kind() == ValueKind::kTensor)
    dims = input.as_tensor().shape();
  else if (input.kind() == ValueKind::kShape)
    dims = input.as_shape();
  else
    type_error(where, ": expected a tensor or a shape but got ", input.kind_name(),
               input.is_null() ? "" : " (" + input.to_string() + ")", " (", kMatchShape, ")");
  if (static_cast<int64_t>(dims.size()) != n)
    value_error(where, ": expected ", n, " dimensions but got ", dims.size(), " in shape ", shape_to_string(dims), " (",
                kMatchShape, ")");
  Heap heap(kMatchShape, args, 1);
  for (int64_t i = 0; i < n; ++i) {
    size_t at = 3 + 2 * static_cast<size_t>(i);
    int64_t code = int_arg(kMatchShape, args, at, "code");
    int64_t value = int_arg(kMatchShape, args, at + 1, "value");
    int64_t dim = dims[static_cast<size_t>(i)];
    switch (code) {
      case kAssertEqualToImm:
        if (dim != value)
          value_error(where, " dimension ", i, ": expected ", value, " but got ", dim, " in shape ",
                      shape_to_string(dims), " (", kMatchShape, ")");
        break;
      case kStoreToHeap:
        heap.at(value) = dim;
        break;
      case kNoOp:
        break;
      case kAssertEqualToLoad:
        if (dim != heap.at(value))
          value_error(where, " dimension ", i, ": expected ", heap.at(value), " (the value of heap slot ", value,
                      ") but got ", dim, " in shape ", shape_to_string(dims), " (", kMatchShape, ")");
        break;
      default:
        value_error(kMatchShape, ": argument ", at, " (code): expected 0 (assert equal to immediate), 1 (store), ",
                    "2 (no-op) or 3 (assert equal to heap slot) but got ", code);
    }
  }
  return Value();
}

// make_shape(heap, n, code_0, value_0, ...) -> Shape
Value make_shape(Args args) {
  constexpr const char* kSignature = "heap, n, code_0, value_0, ...";
  check_min_args(kMakeShape, args, 2, kSignature);
  int64_t n = num_pairs_arg(kMakeShape, args, 1, 2, kSignature);
  Heap heap(kMakeShape, args, 0);
  std::vector<int64_t> dims(static_cast<size_t>(n));
  for (size_t i = 0; i < dims.size(); ++i) {
    size_t at = 2 + 2 * i;
    dims[i] = load_operand(kMakeShape, heap, int_arg(kMakeShape, args, at, "code"),
                           int_arg(kMakeShape, args, at + 1, "value"), at);
  }
  return Value::shape(std::move(dims));
}

int64_t apply_shape_op(const std::string& op, int64_t a, int64_t b) {
  int64_t out = 0;
  auto overflow = [&]() { value_error(kShapeCompute, ": ", op, "(", a, ", ", b, ") overflows int64"); };
  if (op == "add") {
    if (__builtin_add_overflow(a, b, &out)) overflow();
    return out;
  }
  if (op == "sub") {
    if (__builtin_sub_overflow(a, b, &out)) overflow();
    return out;
  }
  if (op == "mul") {
    if (__builtin_mul_overflow(a, b, &out)) overflow();
    return out;
  }
  if (op == "min") return std::min(a, b);
  if (op == "max") return std::max(a, b);
  if (op == "floordiv" || op == "floormod" || op == "ceildiv") {
    if (b == 0) value_error(kShapeCompute, ": ", op, "(", a, ", ", b, "): division by zero");
    if (a == std::numeric_limits<int64_t>::min() && b == -1) {
      if (op == "floormod") return 0;
      overflow();
    }
    if (op == "floordiv") return floor_div(a, b);
    if (op == "floormod") return floor_mod(a, b);
    return ceil_div(a, b);
  }
  value_error(kShapeCompute, ": argument 2 (op): expected one of add, sub, mul, floordiv, floormod, ceildiv, ",
              "min, max but got \"", op, "\"");
}

// shape_compute(heap, dst_slot, op, a_code, a_value, b_code, b_value): heap[dst] = op(a, b)
Value shape_compute(Args args) {
  check_num_args(kShapeCompute, args, 7, "heap, dst_slot, op, a_code, a_value, b_code, b_value");
  Heap heap(kShapeCompute, args, 0);
  int64_t dst = int_arg(kShapeCompute, args, 1, "dst_slot");
  const std::string& op = string_arg(kShapeCompute, args, 2, "op");
  int64_t a = load_operand(kShapeCompute, heap, int_arg(kShapeCompute, args, 3, "a_code"),
                           int_arg(kShapeCompute, args, 4, "a_value"), 3);
  int64_t b = load_operand(kShapeCompute, heap, int_arg(kShapeCompute, args, 5, "b_code"),
                           int_arg(kShapeCompute, args, 6, "b_value"), 5);
  heap.at(dst) = apply_shape_op(op, a, b);
  return Value();
}

// check_tensor_info(arg, ndim (-1: any), dtype ("" or null: any), device_type (-1: any), err_ctx)
Value check_tensor_info(Args args) {
  check_num_args(kCheckTensorInfo, args, 5, "arg, ndim, dtype, device_type, err_ctx");
  int64_t ndim = int_arg(kCheckTensorInfo, args, 1, "ndim");
  std::optional<DataType> dtype;
  bool any_dtype = args[2].is_null() || (args[2].kind() == ValueKind::kString && args[2].as_string().empty());
  if (!any_dtype) dtype = dtype_arg(kCheckTensorInfo, args, 2, "dtype");
  int64_t device_type = int_arg(kCheckTensorInfo, args, 3, "device_type");
  const std::string& err_ctx = string_arg(kCheckTensorInfo, args, 4, "err_ctx");
  std::string_view where = context(kCheckTensorInfo, err_ctx);
  const Value& arg = args[0];
  if (arg.kind() != ValueKind::kTensor)
    type_error(where, ": expected a tensor but got ", arg.kind_name(),
               arg.is_null() ? "" : " (" + arg.to_string() + ")", " (", kCheckTensorInfo, ")");
  Tensor t = arg.as_tensor();
  if (ndim != -1 && t.ndim() != ndim)
    value_error(where, ": expected a ", ndim, "-d tensor but got ", t.ndim(), "-d ", t.to_string(), " (",
                kCheckTensorInfo, ")");
  if (dtype && !(t.dtype() == *dtype))
    value_error(where, ": expected dtype ", *dtype, " but got ", t.dtype(), " in ", t.to_string(), " (",
                kCheckTensorInfo, ")");
  if (device_type != -1 && static_cast<int64_t>(t.device().type) != device_type)
    value_error(where, ": expected a tensor on ", device_type_name(static_cast<DLDeviceType>(device_type)),
                " but got one on ", t.device(), " (", kCheckTensorInfo, ")");
  return Value();
}

// reshape(tensor, shape) -> a view of the same memory
Value reshape(Args args) {
  check_num_args(kReshape, args, 2, "tensor, shape");
  Tensor t = tensor_arg(kReshape, args, 0, "tensor");
  const std::vector<int64_t>& shape = shape_arg(kReshape, args, 1, "shape");
  int64_t numel = checked_numel(kReshape, shape);
  if (numel != t.numel())
    value_error(kReshape, ": cannot reshape ", t.to_string(), " (", t.numel(), " elements) to shape ",
                shape_to_string(shape), " (", numel, " elements)");
  if (!t.is_contiguous()) value_error(kReshape, ": a view needs a contiguous tensor but got ", t.to_string());
  return Value(t.view(shape));
}

// The values of a 1-d integer tensor (argument `index` of `builtin`), read on the host.
std::vector<int64_t> shape_values(std::string_view builtin, Args args, size_t index) {
  Tensor t = tensor_arg(builtin, args, index, "tensor");
  DataType dtype = t.dtype();
  bool is_int = (dtype.is_int() || dtype.is_uint()) && dtype.lanes() == 1;
  if (t.ndim() != 1 || !is_int)
    value_error(builtin, ": argument ", index, " (tensor): expected a 1-d integer tensor but got ", t.to_string());
  // Shape values are read on the host; a strided or device tensor is first copied there.
  if (t.device().type != kDLCPU || !t.is_contiguous()) t = t.copy_to(Device::cpu());
  const char* base = static_cast<const char*>(t.data());
  auto read = [&]<typename T>(T) {
    std::vector<int64_t> dims(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < dims.size(); ++i) {
      T v;
      std::memcpy(&v, base + i * sizeof(T), sizeof(T));
      dims[i] = static_cast<int64_t>(v);
    }
    return dims;
  };
  std::vector<int64_t> dims;
  bool is_signed = dtype.is_int();
  switch (dtype.bits()) {
    case 8: dims = is_signed ? read(int8_t{}) : read(uint8_t{}); break;
    case 16: dims = is_signed ? read(int16_t{}) : read(uint16_t{}); break;
    case 32: dims = is_signed ? read(int32_t{}) : read(uint32_t{}); break;
    case 64: dims = is_signed ? read(int64_t{}) : read(uint64_t{}); break;
    default: value_error(builtin, ": unsupported element type ", dtype);
  }
  return dims;
}

// tensor_to_shape(1-d integer tensor) -> Shape of its values
Value tensor_to_shape(Args args) {
  check_num_args(kTensorToShape, args, 1, "tensor");
  return Value::shape(shape_values(kTensorToShape, args, 0));
}

// reshape_target(x, target, allowzero) -> the Shape ONNX Reshape gives x for `target` (a 1-d
// integer tensor): 0 copies x's dim at that index (unless allowzero: then it is 0), one -1 is
// inferred from x's size.
Value reshape_target(Args args) {
  check_num_args(kReshapeTarget, args, 3, "x, target, allowzero");
  const std::vector<int64_t>& in = tensor_arg(kReshapeTarget, args, 0, "x").shape();
  std::vector<int64_t> out = shape_values(kReshapeTarget, args, 1);
  bool allowzero = int_arg(kReshapeTarget, args, 2, "allowzero") != 0;
  int64_t numel = 1, known = 1;
  for (int64_t d : in) numel *= d;
  int inferred = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t& d = out[i];
    if (d == 0 && !allowzero) {
      if (i >= in.size())
        value_error(kReshapeTarget, ": target ", shape_to_string(out), " copies dim ", i, " (a 0) of x ",
                    shape_to_string(in), ", which has no such dim");
      d = in[i];
    }
    if (d == -1) {
      if (inferred >= 0) value_error(kReshapeTarget, ": target ", shape_to_string(out), " has more than one -1");
      if (allowzero && std::count(out.begin(), out.end(), 0) != 0)
        value_error(kReshapeTarget, ": target ", shape_to_string(out), " has both 0 and -1 with allowzero");
      inferred = static_cast<int>(i);
      continue;
    }
    if (d < 0) value_error(kReshapeTarget, ": target ", shape_to_string(out), " has a negative dim ", d);
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0)
      value_error(kReshapeTarget, ": x ", shape_to_string(in), " cannot be reshaped to ", shape_to_string(out));
    out[static_cast<size_t>(inferred)] = numel / known;
  } else if (known != numel) {
    value_error(kReshapeTarget, ": x ", shape_to_string(in), " (", numel, " elements) cannot be reshaped to ",
                shape_to_string(out), " (", known, " elements)");
  }
  return Value::shape(std::move(out));
}

// A 0-d float64 tensor's value (argument `index` of `builtin`), read on the host.
double scalar_f64(std::string_view builtin, Args args, size_t index, const char* what) {
  Tensor t = tensor_arg(builtin, args, index, what);
  if (t.ndim() != 0 || t.dtype() != DataType::float64())
    value_error(builtin, ": argument ", index, " (", what, "): expected a 0-d float64 tensor but got ", t.to_string());
  if (t.device().type != kDLCPU) t = t.copy_to(Device::cpu());
  return *static_cast<const double*>(t.data());
}

// range_length(start, limit, delta) -> Shape[(n)], ONNX Range's element count
// max(ceil((limit - start) / delta), 0) (the importer casts the three to float64).
Value range_length(Args args) {
  check_num_args(kRangeLength, args, 3, "start, limit, delta");
  double start = scalar_f64(kRangeLength, args, 0, "start"), limit = scalar_f64(kRangeLength, args, 1, "limit"),
         delta = scalar_f64(kRangeLength, args, 2, "delta");
  if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta))
    value_error(kRangeLength, ": Range(start ", start, ", limit ", limit, ", delta ", delta,
                ") has no length: delta must be non-zero and all three finite");
  double n = std::ceil((limit - start) / delta);
  if (n > static_cast<double>(std::numeric_limits<int32_t>::max()))
    value_error(kRangeLength, ": Range(start ", start, ", limit ", limit, ", delta ", delta, ") has ", n,
                " elements, more than a dim holds");
  return Value::shape({std::max<int64_t>(0, static_cast<int64_t>(n))});
}

}  // namespace

void register_shape_builtins() {
  register_packed(kAllocShapeHeap, [](Args args) -> Value {
    check_num_args(kAllocShapeHeap, args, 2, "vm, size");
    VirtualMachineNode* vm = vm_arg(kAllocShapeHeap, args, 0);
    int64_t size = int_arg(kAllocShapeHeap, args, 1, "size");
    if (size < 0) value_error(kAllocShapeHeap, ": argument 1 (size): expected a size >= 0 but got ", size);
    // The heap lives on the host (device -1): builtins read and write it directly.
    Tensor heap = Tensor::empty({size}, DataType::int64(), vm->device(-1), vm->allocator(-1));
    std::fill_n(static_cast<int64_t*>(heap.data()), size, int64_t{0});
    return Value(heap);
  });
  register_packed(kMatchShape, match_shape);
  register_packed(kMakeShape, make_shape);
  register_packed(kShapeCompute, shape_compute);
  register_packed(kCheckTensorInfo, check_tensor_info);
  register_packed(kReshape, reshape);
  register_packed(kShapeOf, [](Args args) -> Value {
    check_num_args(kShapeOf, args, 1, "tensor");
    return Value::shape(tensor_arg(kShapeOf, args, 0, "tensor").shape());
  });
  register_packed(kTensorToShape, tensor_to_shape);
  register_packed(kReshapeTarget, reshape_target);
  register_packed(kRangeLength, range_length);
}

}  // namespace anvil::vm
