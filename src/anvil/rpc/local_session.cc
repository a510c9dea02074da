// LocalSession: argument conversion, function calls, return encoding and tensor copies (see
// local_session.h). The syscalls live in syscalls.cc.
#include "anvil/rpc/local_session.h"

#include <array>
#include <cstring>
#include <utility>

#include "anvil/runtime/device_api.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/module/module.h"

namespace anvil::rpc {
namespace {

WireValue type_slot(TypeIndex t) { return WireValue::integer(static_cast<int32_t>(t)); }

thread_local std::shared_ptr<const SessionFunctions> t_session_functions;

}  // namespace

ScopedSessionFunctions::ScopedSessionFunctions(std::shared_ptr<const SessionFunctions> functions)
    : previous_(std::exchange(t_session_functions, std::move(functions))) {}

ScopedSessionFunctions::~ScopedSessionFunctions() { t_session_functions = std::move(previous_); }

LocalSession::LocalSession(Limits limits) : limits_(limits), overlay_(t_session_functions) {}

LocalSession::~LocalSession() {
  // Objects first (they may hold tensors), then memory, then streams.
  handles_.clear();
  allocations_.clear();
  streams_.free_all();
}

Value LocalSession::to_value(const WireValue& v, size_t index) {
  auto handle_value = [&](const char* what) -> const Value& {
    const Value* found = handles_.find(v.handle());
    if (found == nullptr) {
      value_error("argument ", index, ": ", what, " handle 0x", std::hex, v.handle(), std::dec,
                  " is not known to this session (freed, or never handed out)");
    }
    return *found;
  };
  switch (v.kind) {
    case WireKind::kNone:
      return Value();
    case WireKind::kInt:
      return Value(v.i);
    case WireKind::kBool:
      return Value(v.i != 0);
    case WireKind::kFloat:
      return Value(v.f);
    case WireKind::kOpaquePtr:
      return Value::handle(reinterpret_cast<void*>(v.handle()));
    case WireKind::kDataType:
      return Value(DataType(v.dtype));
    case WireKind::kDevice:
      return Value(Device::from_dl(v.device));
    case WireKind::kTensor:
      return Value(allocations_.resolve(v.tensor, "tensor argument"));
    case WireKind::kString:
      return Value(v.s);
    case WireKind::kBytes:
      return Value::bytes(v.s);
    case WireKind::kFunction: {
      const Value& f = handle_value("function");
      if (f.kind() != ValueKind::kFunction) type_error("argument ", index, ": handle names a ", f.kind_name(), ", not a function");
      return f;
    }
    case WireKind::kModule: {
      const Value& m = handle_value("module");
      if (m.kind() != ValueKind::kModule) type_error("argument ", index, ": handle names a ", m.kind_name(), ", not a module");
      return m;
    }
    case WireKind::kObjectRef:
      return handle_value("object");
  }
  type_error("argument ", index, ": unsupported wire value ", v.describe());
}

Tensor LocalSession::addressable(const Tensor& t) {
  bool host = t.device().type == kDLCPU;
  if (t.is_contiguous() && (host || t.dl()->byte_offset == 0)) return t;
  // The wire has no strides, and device handles cannot be offset by the client: copy.
  Tensor compact = Tensor::empty(t.shape(), t.dtype(), t.device());
  compact.copy_from(t);
  return compact;
}

std::vector<WireValue> LocalSession::encode_return(const Value& v) {
  auto object_reply = [&](TypeIndex t) {
    return std::vector<WireValue>{type_slot(t), WireValue::opaque(remember(v))};
  };
  switch (v.kind()) {
    case ValueKind::kNull:
      return {type_slot(TypeIndex::kNone), WireValue::none()};
    case ValueKind::kInt:
      return {type_slot(TypeIndex::kInt), WireValue::integer(v.as_int())};
    case ValueKind::kBool:
      return {type_slot(TypeIndex::kBool), WireValue::boolean(v.as_bool())};
    case ValueKind::kFloat:
      return {type_slot(TypeIndex::kFloat), WireValue::floating(v.as_float())};
    case ValueKind::kHandle:
      return {type_slot(TypeIndex::kOpaquePtr), WireValue::opaque(reinterpret_cast<uint64_t>(v.as_handle()))};
    case ValueKind::kDataType:
      return {type_slot(TypeIndex::kDataType), WireValue::data_type(v.as_dtype().dl())};
    case ValueKind::kDevice:
      return {type_slot(TypeIndex::kDevice), WireValue::dev(v.as_device().dl())};
    case ValueKind::kString: {
      const std::string& s = v.as_string();
      return {type_slot(s.size() <= 7 ? TypeIndex::kSmallStr : TypeIndex::kStr), WireValue::string(s)};
    }
    case ValueKind::kBytes: {
      const std::string& s = v.as_bytes();
      return {type_slot(s.size() <= 7 ? TypeIndex::kSmallBytes : TypeIndex::kBytes), WireValue::bytes(s)};
    }
    case ValueKind::kTensor: {
      Tensor t = addressable(v.as_tensor());
      uint64_t key = allocations_.add_tensor(t);
      uint64_t handle = remember(Value(t), key);
      WireTensor wt;
      wt.data = key;
      wt.device = t.device().dl();
      wt.dtype = t.dtype().dl();
      wt.shape = t.shape();
      wt.byte_offset = 0;
      return {type_slot(TypeIndex::kTensor), WireValue::tensor_ptr(std::move(wt)), WireValue::opaque(handle)};
    }
    case ValueKind::kFunction:
      return object_reply(TypeIndex::kFunction);
    case ValueKind::kModule:
      return object_reply(TypeIndex::kModule);
    case ValueKind::kShape:
      return object_reply(TypeIndex::kShape);
    case ValueKind::kArray:
      return object_reply(TypeIndex::kArray);
    case ValueKind::kObject:
      return object_reply(TypeIndex::kObject);
  }
  type_error("cannot return a value of kind ", v.kind_name(), " over RPC");
}

std::vector<WireValue> LocalSession::call_function(uint64_t handle, std::span<const WireValue> args) {
  const Value* target = handles_.find(handle);
  if (target == nullptr) {
    value_error("CallFunc: function handle 0x", std::hex, handle, std::dec, " is not known to this session");
  }
  if (target->kind() != ValueKind::kFunction) {
    type_error("CallFunc: handle 0x", std::hex, handle, std::dec, " names a ", target->kind_name(), ", not a function");
  }
  Function f = target->as_function();  // a copy: the call may free the handle
  // Up to 8 arguments (nearly every call) without a heap allocation.
  constexpr size_t kInline = 8;
  std::array<Value, kInline> inline_values;
  std::vector<Value> heap_values;
  Value* values = inline_values.data();
  if (args.size() > kInline) {
    heap_values.resize(args.size());
    values = heap_values.data();
  }
  for (size_t i = 0; i < args.size(); ++i) values[i] = to_value(args[i], i);
  Value result = f.call(Args(values, args.size()));
  return encode_return(result);
}

void LocalSession::copy_to_remote(const WireTensor& dst, std::string_view data) {
  Device dev = Device::from_dl(dst.device);
  void* base = allocations_.checked_range(dst.data, dst.byte_offset, data.size(), dev, "CopyToRemote");
  if (data.empty()) return;
  if (dev.type == kDLCPU) {
    std::memcpy(static_cast<char*>(base) + dst.byte_offset, data.data(), data.size());
    return;
  }
  DeviceAPI* api = DeviceAPI::get(dev);
  api->copy(data.data(), 0, base, dst.byte_offset, data.size(), Device::cpu(), dev, nullptr);
  api->sync(dev, nullptr);
}

std::string_view LocalSession::copy_from_remote(const WireTensor& src, uint64_t nbytes, std::string* staging) {
  Device dev = Device::from_dl(src.device);
  void* base = allocations_.checked_range(src.data, src.byte_offset, nbytes, dev, "CopyFromRemote");
  if (nbytes == 0) return {};
  if (dev.type == kDLCPU) return std::string_view(static_cast<const char*>(base) + src.byte_offset, nbytes);
  staging->resize(nbytes);
  DeviceAPI* api = DeviceAPI::get(dev);
  api->copy(base, src.byte_offset, staging->data(), 0, nbytes, dev, Device::cpu(), nullptr);
  api->sync(dev, nullptr);
  return *staging;
}

}  // namespace anvil::rpc
