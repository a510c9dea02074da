// The runtime API table handed to kernel libraries, the thread-local kernel error, workspace
// memory, and Value <-> AnvilValue conversion.
#include "anvil/runtime/runtime_api.h"

#include "anvil/base/error.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/tensor.h"

namespace anvil {
namespace {

struct KernelError {
  int32_t kind = 0;
  std::string message;
};
thread_local KernelError t_error;

void* workspace_alloc(int32_t device_type, int32_t device_id, uint64_t nbytes) {
  try {
    Device dev{static_cast<DLDeviceType>(device_type), device_id};
    return DeviceAPI::get(dev)->alloc(dev, nbytes, kAllocAlignment);
  } catch (const std::exception& e) {
    AnvilErrorSet(kAnvilErrorRuntime, e.what());
    return nullptr;
  }
}

int32_t workspace_free(int32_t device_type, int32_t device_id, void* ptr) {
  try {
    Device dev{static_cast<DLDeviceType>(device_type), device_id};
    DeviceAPI::get(dev)->free(dev, ptr);
    return 0;
  } catch (const std::exception& e) {
    AnvilErrorSet(kAnvilErrorRuntime, e.what());
    return -1;
  }
}

int32_t function_call(void* handle, const AnvilValue* args, int32_t num_args, AnvilValue* ret) {
  try {
    auto* fn = static_cast<FunctionNode*>(handle);
    std::vector<Value> values;
    values.reserve(static_cast<size_t>(num_args));
    for (int32_t i = 0; i < num_args; ++i) {
      const AnvilValue& a = args[i];
      switch (a.kind) {
        case kAnvilNull: values.emplace_back(); break;
        case kAnvilInt: values.emplace_back(a.v_int64); break;
        case kAnvilFloat: values.emplace_back(a.v_float64); break;
        case kAnvilBool: values.emplace_back(a.v_int64 != 0); break;
        case kAnvilHandle: values.push_back(Value::handle(a.v_handle)); break;
        case kAnvilDevice: values.emplace_back(Device::from_dl(a.v_device)); break;
        case kAnvilDataType: values.emplace_back(DataType(a.v_dtype)); break;
        case kAnvilString: values.emplace_back(std::string(a.v_str)); break;
        case kAnvilTensor: {
          const DLTensor* t = a.v_tensor;
          std::span<const int64_t> shape(t->shape, static_cast<size_t>(t->ndim));
          std::span<const int64_t> strides;
          if (t->strides) strides = std::span<const int64_t>(t->strides, static_cast<size_t>(t->ndim));
          values.emplace_back(Tensor::wrap(t->data, shape, DataType(t->dtype), Device::from_dl(t->device), nullptr,
                                           strides, t->byte_offset));
          break;
        }
        default:
          type_error("function_call: argument ", i, " has kind ", a.kind, " which kernels cannot pass");
      }
    }
    Value result = fn->body(values);
    switch (result.kind()) {
      case ValueKind::kNull: ret->kind = kAnvilNull; break;
      case ValueKind::kInt: ret->kind = kAnvilInt; ret->v_int64 = result.as_int(); break;
      case ValueKind::kBool: ret->kind = kAnvilBool; ret->v_int64 = result.as_bool(); break;
      case ValueKind::kFloat: ret->kind = kAnvilFloat; ret->v_float64 = result.as_float(); break;
      default: type_error("function_call: a ", result.kind_name(), " result cannot be returned to a kernel");
    }
    return 0;
  } catch (const Error& e) {
    AnvilErrorSet(static_cast<int32_t>(e.kind()), e.what());
  } catch (const std::exception& e) {
    AnvilErrorSet(kAnvilErrorRuntime, e.what());
  }
  return -1;
}

const AnvilRuntimeApi kRuntimeApi = {
    ANVIL_ABI_VERSION, sizeof(AnvilRuntimeApi), AnvilErrorSet, AnvilParallelLaunch, AnvilParallelBarrier,
    workspace_alloc,   workspace_free,          function_call,
};

}  // namespace

std::string take_kernel_error(int32_t* kind) {
  *kind = t_error.kind == 0 ? kAnvilErrorRuntime : t_error.kind;
  std::string message = std::move(t_error.message);
  t_error = KernelError{};
  return message;
}

void to_abi_args(std::span<const Value> args, AbiArgs* out) {
  out->cells.resize(args.size());
  out->byte_arrays.clear();
  out->shapes.clear();
  // Reserve so pointers into these vectors stay valid while we fill them.
  out->byte_arrays.reserve(args.size());
  out->shapes.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Value& v = args[i];
    AnvilValue& c = out->cells[i];
    c = AnvilValue{};
    c.kind = static_cast<int32_t>(v.kind());
    switch (v.kind()) {
      case ValueKind::kNull: break;
      case ValueKind::kInt:
      case ValueKind::kBool: c.v_int64 = v.as_int(); break;
      case ValueKind::kFloat: c.v_float64 = v.as_float(); break;
      case ValueKind::kHandle: c.v_handle = v.as_handle(); break;
      case ValueKind::kDevice: c.v_device = v.as_device().dl(); break;
      case ValueKind::kDataType: c.v_dtype = v.as_dtype().dl(); break;
      case ValueKind::kString: c.v_str = v.as_string().c_str(); break;
      case ValueKind::kBytes: {
        const std::string& b = v.as_bytes();
        out->byte_arrays.push_back({b.data(), b.size()});
        c.v_handle = &out->byte_arrays.back();
        break;
      }
      case ValueKind::kShape: {
        const auto& dims = v.as_shape();
        out->shapes.push_back({dims.data(), dims.size()});
        c.v_handle = &out->shapes.back();
        break;
      }
      case ValueKind::kTensor: c.v_tensor = &static_cast<TensorNode*>(v.object_ptr())->dl; break;
      case ValueKind::kFunction: c.v_handle = v.object_ptr(); break;
      default:
        type_error("argument ", i, " is a ", v.kind_name(), ", which cannot be passed to a compiled kernel");
    }
  }
}

Value from_abi_return(const AnvilValue& ret) {
  switch (ret.kind) {
    case kAnvilNull: return Value();
    case kAnvilInt: return Value(ret.v_int64);
    case kAnvilFloat: return Value(ret.v_float64);
    case kAnvilBool: return Value(ret.v_int64 != 0);
    case kAnvilDevice: return Value(Device::from_dl(ret.v_device));
    case kAnvilDataType: return Value(DataType(ret.v_dtype));
    default: type_error("a kernel returned a value of kind ", ret.kind, "; kernels may only return POD values");
  }
}

}  // namespace anvil

extern "C" {

void AnvilErrorSet(int32_t kind, const char* message) {
  anvil::t_error.kind = kind;
  anvil::t_error.message = message ? message : "(no message)";
}

const AnvilRuntimeApi* AnvilGetRuntimeApi(void) { return &anvil::kRuntimeApi; }

}  // extern "C"
