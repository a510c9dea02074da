// The syscalls of a serving session (codes 9-21, spec §2.6.3): global-function lookup, handle
// release, device attributes, memory, streams and device-to-device copies. Each checks its
// arguments and answers with exactly one value.
#include <algorithm>
#include <bit>
#include <memory>
#include <string>
#include <vector>

#include "anvil/rpc/local_session.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/registry.h"

namespace anvil::rpc {
namespace {

// Argument accessors that name the syscall and the position on a mismatch.
struct SyscallArgs {
  const char* name;
  std::span<const WireValue> args;

  void expect_count(size_t lo, size_t hi) const {
    if (args.size() < lo || args.size() > hi) {
      value_error(name, ": expected ", lo == hi ? str_cat(lo) : str_cat(lo, " to ", hi), " arguments but got ",
                  args.size());
    }
  }
  const WireValue& at(size_t i, WireKind kind, const char* what) const {
    if (args[i].kind != kind) type_error(name, ": argument ", i, " must be ", what, ", not ", args[i].describe());
    return args[i];
  }
  Device device(size_t i) const { return Device::from_dl(at(i, WireKind::kDevice, "a device").device); }
  int64_t integer(size_t i) const {
    const WireValue& v = args[i];
    if (v.kind != WireKind::kInt && v.kind != WireKind::kBool) type_error(name, ": argument ", i, " must be an int, not ", v.describe());
    return v.i;
  }
  uint64_t pointer(size_t i) const {
    const WireValue& v = args[i];
    if (v.kind == WireKind::kNone) return 0;
    if (v.kind != WireKind::kOpaquePtr && v.kind != WireKind::kInt) {
      type_error(name, ": argument ", i, " must be a pointer, not ", v.describe());
    }
    return v.handle();
  }
  const WireTensor& tensor(size_t i) const { return at(i, WireKind::kTensor, "a tensor").tensor; }
};

DeviceAPI* api_for(Device dev) { return DeviceAPI::get(dev); }

// tvm-ffi's way to list the globals (tvm_ffi.registry.list_global_func_names): a function of no
// arguments that returns a functor f over a snapshot of the names, f(-1) = how many, f(i) = the
// i-th (sorted).
constexpr std::string_view kListNamesFunctor = "ffi.FunctionListGlobalNamesFunctor";

Function list_names_functor(const std::shared_ptr<const SessionFunctions>& overlay) {
  return Function::from_packed(
      [overlay](Args args) -> Value {
        if (!args.empty()) type_error(kListNamesFunctor, " expects no arguments but got ", args.size());
        std::vector<std::string> names = Registry::list();
        if (overlay) {
          for (const auto& entry : *overlay) names.push_back(entry.first);
        }
        names.emplace_back(kListNamesFunctor);
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        auto snapshot = std::make_shared<const std::vector<std::string>>(std::move(names));
        return Value(Function::from_typed(
            [snapshot](int64_t i) -> Value {
              auto n = static_cast<int64_t>(snapshot->size());
              if (i == -1) return Value(n);
              if (i < 0 || i >= n) index_error("global function name index ", i, " is out of range [0, ", n, ")");
              return Value((*snapshot)[static_cast<size_t>(i)]);
            },
            "ffi.FunctionListGlobalNamesFunctor.names"));
      },
      std::string(kListNamesFunctor));
}

}  // namespace

WireValue LocalSession::syscall(RPCCode code, std::span<const WireValue> args) {
  switch (code) {
    case RPCCode::kGetGlobalFunc:
      return get_global_func(args);
    case RPCCode::kFreeHandle:
      return free_handle(args);
    case RPCCode::kDevSetDevice: {
      SyscallArgs a{"DevSetDevice", args};
      a.expect_count(1, 1);
      api_for(a.device(0))->set_device(a.device(0));
      return WireValue::none();
    }
    case RPCCode::kDevGetAttr:
      return dev_get_attr(args);
    case RPCCode::kDevAllocData:
      return dev_alloc_data(args);
    case RPCCode::kDevFreeData:
      return dev_free_data(args);
    case RPCCode::kDevStreamSync:
      return dev_stream_sync(args);
    case RPCCode::kCopyAmongRemote:
      return copy_among_remote(args);
    case RPCCode::kDevAllocDataWithScope:
      return dev_alloc_data_with_scope(args);
    case RPCCode::kDevCreateStream:
      return dev_create_stream(args);
    case RPCCode::kDevFreeStream:
      return dev_free_stream(args);
    case RPCCode::kDevSetStream:
      return dev_set_stream(args);
    case RPCCode::kDevGetCurrentStream:
      return dev_get_current_stream(args);
    default:
      break;
  }
  value_error("unknown syscall ", rpc_code_name(static_cast<int32_t>(code)));
}

WireValue LocalSession::get_global_func(std::span<const WireValue> args) {
  SyscallArgs a{"GetGlobalFunc", args};
  a.expect_count(1, 1);
  const std::string& name = a.at(0, WireKind::kString, "a string").s;
  std::optional<Function> f;
  if (overlay_) {
    if (auto it = overlay_->find(name); it != overlay_->end()) f = it->second;
  }
  if (!f) f = Registry::find(name);
  if (!f && name == kListNamesFunctor) f = list_names_functor(overlay_);
  // Not found is a null handle, not an error: the client raises AttributeError itself.
  if (!f) return WireValue::opaque(0);
  return WireValue::opaque(remember(Value(*f)));
}

WireValue LocalSession::free_handle(std::span<const WireValue> args) {
  SyscallArgs a{"FreeHandle", args};
  a.expect_count(1, 1);
  uint64_t data_key = 0;
  // Unknown values are ignored: v0.22/0.23 clients free a tensor's data pointer (spec §2.9).
  if (handles_.release(a.pointer(0), &data_key) && data_key != 0) allocations_.release_tensor(data_key);
  return WireValue::none();
}

WireValue LocalSession::dev_get_attr(std::span<const WireValue> args) {
  SyscallArgs a{"DevGetAttr", args};
  a.expect_count(2, 2);
  Device dev = a.device(0);
  int64_t kind = a.integer(1);
  DeviceAPI* api = DeviceAPI::get(dev, /*allow_missing=*/true);
  if (kind == static_cast<int64_t>(DeviceAttr::kExist) && api == nullptr) return WireValue::integer(0);
  if (api == nullptr) runtime_error("DevGetAttr: no device API for ", dev);
  if (kind < 0 || kind > static_cast<int64_t>(DeviceAttr::kImagePitchAlignment)) {
    value_error("DevGetAttr: unknown attribute kind ", kind);
  }
  Value v = api->get_attr(dev, static_cast<DeviceAttr>(kind));
  switch (v.kind()) {
    case ValueKind::kNull:
      return WireValue::none();
    case ValueKind::kInt:
    case ValueKind::kBool:
      return WireValue::integer(v.as_int());
    case ValueKind::kFloat:
      return WireValue::floating(v.as_float());
    case ValueKind::kString:  // TVM servers send strings here in object encoding
      return WireValue::string(v.as_string(), /*as_object=*/true);
    default:
      runtime_error("DevGetAttr: attribute ", kind, " of ", dev, " is a ", v.kind_name());
  }
}

uint64_t LocalSession::allocate(Device dev, uint64_t nbytes, uint64_t alignment, const char* what) {
  if (nbytes > limits_.max_alloc_bytes) {
    value_error(what, ": ", nbytes, " bytes exceed this server's limit of ", limits_.max_alloc_bytes);
  }
  if (alignment == 0 || !std::has_single_bit(alignment) || alignment > 4096) {
    value_error(what, ": alignment ", alignment, " is not a power of two up to 4096");
  }
  DeviceAPI* api = api_for(dev);
  // Never zero bytes: every allocation needs a distinct, non-null address to be its key.
  size_t n = static_cast<size_t>(std::max<uint64_t>(nbytes, 1));
  void* ptr = api->alloc(dev, n, std::max<size_t>(alignment, kAllocAlignment));
  std::shared_ptr<void> owner(ptr, [api, dev](void* p) { api->free(dev, p); });
  return allocations_.add_allocation(dev, ptr, nbytes, std::move(owner));
}

WireValue LocalSession::dev_alloc_data(std::span<const WireValue> args) {
  SyscallArgs a{"DevAllocData", args};
  a.expect_count(4, 4);
  int64_t nbytes = a.integer(1);
  int64_t alignment = a.integer(2);
  if (nbytes < 0 || alignment < 0) value_error("DevAllocData: negative size ", nbytes, " or alignment ", alignment);
  a.at(3, WireKind::kDataType, "a data type");
  return WireValue::opaque(allocate(a.device(0), static_cast<uint64_t>(nbytes), static_cast<uint64_t>(alignment),
                                    "DevAllocData"));
}

WireValue LocalSession::dev_alloc_data_with_scope(std::span<const WireValue> args) {
  SyscallArgs a{"DevAllocDataWithScope", args};
  a.expect_count(1, 2);
  const WireTensor& proto = a.tensor(0);
  if (args.size() == 2 && args[1].kind != WireKind::kNone) {
    const std::string& scope = a.at(1, WireKind::kString, "a memory scope string").s;
    if (!scope.empty() && scope != "global") {
      not_implemented_error("DevAllocDataWithScope: memory scope '", scope, "' is not supported (only 'global')");
    }
  }
  uint64_t nbytes = proto.nbytes();
  return WireValue::opaque(allocate(Device::from_dl(proto.device), nbytes, kAllocAlignment, "DevAllocDataWithScope"));
}

WireValue LocalSession::dev_free_data(std::span<const WireValue> args) {
  SyscallArgs a{"DevFreeData", args};
  a.expect_count(2, 2);
  a.device(0);
  // A second free of the same address, or one the client never had, is ignored like FreeHandle.
  allocations_.free_allocation(a.pointer(1));
  return WireValue::none();
}

WireValue LocalSession::dev_stream_sync(std::span<const WireValue> args) {
  SyscallArgs a{"DevStreamSync", args};
  a.expect_count(2, 2);
  Device dev = a.device(0);
  api_for(dev)->sync(dev, streams_.lookup(a.pointer(1), dev, "DevStreamSync"));
  return WireValue::none();
}

WireValue LocalSession::copy_among_remote(std::span<const WireValue> args) {
  SyscallArgs a{"CopyAmongRemote", args};
  a.expect_count(3, 3);
  const WireTensor& from = a.tensor(0);
  const WireTensor& to = a.tensor(1);
  uint64_t nbytes = from.nbytes();
  if (to.nbytes() != nbytes) value_error("CopyAmongRemote: ", nbytes, " bytes cannot go into ", to.nbytes());
  Device from_dev = Device::from_dl(from.device);
  Device to_dev = Device::from_dl(to.device);
  void* src = allocations_.checked_range(from.data, from.byte_offset, nbytes, from_dev, "CopyAmongRemote source");
  void* dst = allocations_.checked_range(to.data, to.byte_offset, nbytes, to_dev, "CopyAmongRemote target");
  Device compute = from_dev.type != kDLCPU ? from_dev : to_dev;
  Stream stream = streams_.lookup(a.pointer(2), compute, "CopyAmongRemote");
  api_for(compute)->copy(src, from.byte_offset, dst, to.byte_offset, nbytes, from_dev, to_dev, stream);
  return WireValue::none();
}

WireValue LocalSession::dev_create_stream(std::span<const WireValue> args) {
  SyscallArgs a{"DevCreateStream", args};
  a.expect_count(1, 1);
  Device dev = a.device(0);
  Stream s = api_for(dev)->create_stream(dev);
  if (s != nullptr) streams_.add(dev, s);
  return WireValue::opaque(reinterpret_cast<uint64_t>(s));
}

WireValue LocalSession::dev_free_stream(std::span<const WireValue> args) {
  SyscallArgs a{"DevFreeStream", args};
  a.expect_count(2, 2);
  Device dev = a.device(0);
  uint64_t value = a.pointer(1);
  Stream s = streams_.lookup(value, dev, "DevFreeStream");
  if (s != nullptr) {
    streams_.remove(value);
    std::erase_if(current_streams_, [&](const auto& entry) { return entry.second == value; });
    api_for(dev)->free_stream(dev, s);
  }
  return WireValue::none();
}

WireValue LocalSession::dev_set_stream(std::span<const WireValue> args) {
  SyscallArgs a{"DevSetStream", args};
  a.expect_count(2, 2);
  Device dev = a.device(0);
  uint64_t value = a.pointer(1);
  streams_.lookup(value, dev, "DevSetStream");
  current_streams_[{static_cast<int>(dev.type), dev.id}] = value;
  return WireValue::none();
}

WireValue LocalSession::dev_get_current_stream(std::span<const WireValue> args) {
  SyscallArgs a{"DevGetCurrentStream", args};
  a.expect_count(1, 1);
  Device dev = a.device(0);
  auto it = current_streams_.find({static_cast<int>(dev.type), dev.id});
  return WireValue::opaque(it == current_streams_.end() ? 0 : it->second);
}

}  // namespace anvil::rpc
