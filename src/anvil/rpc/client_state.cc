// ClientState: request serialisation, argument encoding, return decoding and handle release
// for client sessions (see client_state.h).
#include "anvil/rpc/client_state.h"

#include <algorithm>

#include "anvil/rpc/client.h"

namespace anvil::rpc::detail {

ClientState::ClientState(Endpoint endpoint, std::string remote_key)
    : endpoint_(std::move(endpoint)), remote_key_(std::move(remote_key)) {}

ClientState::~ClientState() { close(); }

bool ClientState::is_open() {
  std::lock_guard<std::mutex> lock(request_mutex_);
  return endpoint_.is_open();
}

void ClientState::close() {
  std::lock_guard<std::mutex> lock(request_mutex_);
  endpoint_.shutdown();
}

void ClientState::check_open_locked() const {
  if (!endpoint_.is_open()) throw ChannelError("the RPC session is closed");
}

void ClientState::flush_releases_locked() {
  std::vector<uint64_t> handles;
  std::vector<std::pair<DLDevice, uint64_t>> data;
  {
    std::lock_guard<std::mutex> lock(release_mutex_);
    handles.swap(pending_handles_);
    data.swap(pending_data_);
  }
  for (uint64_t h : handles) {
    WireValue arg = WireValue::opaque(h);
    endpoint_.syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&arg, 1));
  }
  for (auto& [dev, ptr] : data) {
    WireValue args[] = {WireValue::dev(dev), WireValue::opaque(ptr)};
    endpoint_.syscall(RPCCode::kDevFreeData, args);
  }
}

template <typename F>
auto ClientState::guarded(F&& request) {
  std::lock_guard<std::mutex> lock(request_mutex_);
  check_open_locked();
  try {
    flush_releases_locked();
    return request();
  } catch (const RPCSessionTimeoutError&) {
    endpoint_.close();  // the server ended the session
    throw;
  } catch (const RPCError&) {
    throw;  // the request failed; the session goes on
  } catch (const Error&) {
    // A broken or desynchronised stream: no later request could be trusted.
    endpoint_.close();
    throw;
  }
}

std::vector<WireValue> ClientState::call(uint64_t handle, std::span<const WireValue> args) {
  return guarded([&] { return endpoint_.call(handle, args); });
}

WireValue ClientState::syscall(RPCCode code, std::span<const WireValue> args) {
  return guarded([&] { return endpoint_.syscall(code, args); });
}

uint64_t ClientState::max_packet_bytes_locked() {
  if (!max_packet_) {
    // Asked once (TVM's client asks before every copy when the server lacks the function).
    WireValue name = WireValue::string("tvm.rpc.server.GetCRTMaxPacketSize");
    uint64_t f = endpoint_.syscall(RPCCode::kGetGlobalFunc, std::span<const WireValue>(&name, 1)).handle();
    uint64_t limit = UINT64_MAX;
    if (f != 0) {
      std::vector<WireValue> reply = endpoint_.call(f, {});
      if (reply.size() == 2 && reply[1].kind == WireKind::kInt && reply[1].i > 0) limit = static_cast<uint64_t>(reply[1].i);
      WireValue arg = WireValue::opaque(f);
      endpoint_.syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&arg, 1));
    }
    // Our own replies are read under our own limit too.
    max_packet_ = std::min(limit, endpoint_.limits().max_packet_bytes);
  }
  return *max_packet_;
}

void ClientState::copy_to_remote(const WireTensor& dst, const void* data, uint64_t nbytes) {
  guarded([&] { copy_to_remote_locked(dst, data, nbytes); });
}

void ClientState::copy_from_remote(const WireTensor& src, void* out, uint64_t nbytes) {
  guarded([&] { copy_from_remote_locked(src, out, nbytes); });
}

void ClientState::copy_to_remote_locked(const WireTensor& dst, const void* data, uint64_t nbytes) {
  uint64_t overhead = 4 + dst.encoded_size() + 8;
  uint64_t max = max_packet_bytes_locked();
  if (max <= overhead) runtime_error("the server's packet limit (", max, " bytes) cannot hold a copy");
  uint64_t block = max - overhead;
  WireTensor chunk = dst;
  const char* bytes = static_cast<const char*>(data);
  for (uint64_t off = 0; off < nbytes; off += block) {
    uint64_t n = std::min(block, nbytes - off);
    chunk.byte_offset = dst.byte_offset + off;
    endpoint_.copy_to_remote(chunk, std::string_view(bytes + off, n));
  }
}

void ClientState::copy_from_remote_locked(const WireTensor& src, void* out, uint64_t nbytes) {
  uint64_t overhead = 4 + 4;  // the CopyAck code; the length is outside the limit
  uint64_t max = max_packet_bytes_locked();
  uint64_t block = max > overhead ? max - overhead : 1;
  WireTensor chunk = src;
  char* bytes = static_cast<char*>(out);
  for (uint64_t off = 0; off < nbytes; off += block) {
    uint64_t n = std::min(block, nbytes - off);
    chunk.byte_offset = src.byte_offset + off;
    endpoint_.copy_from_remote(chunk, bytes + off, n);
  }
}

void ClientState::free_handle(uint64_t handle) {
  std::unique_lock<std::mutex> lock(request_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    // Inside another request (e.g. a reply being decoded): send it before the next one.
    std::lock_guard<std::mutex> guard(release_mutex_);
    pending_handles_.push_back(handle);
    return;
  }
  if (!endpoint_.is_open()) return;
  try {
    WireValue arg = WireValue::opaque(handle);
    endpoint_.syscall(RPCCode::kFreeHandle, std::span<const WireValue>(&arg, 1));
  } catch (const std::exception&) {
    // Releases are best effort, as in TVM: the server frees everything at session end anyway.
  }
}

void ClientState::free_data(DLDevice device, uint64_t data) {
  std::unique_lock<std::mutex> lock(request_mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    std::lock_guard<std::mutex> guard(release_mutex_);
    pending_data_.emplace_back(device, data);
    return;
  }
  if (!endpoint_.is_open()) return;
  try {
    WireValue args[] = {WireValue::dev(device), WireValue::opaque(data)};
    endpoint_.syscall(RPCCode::kDevFreeData, args);
  } catch (const std::exception&) {
  }
}

std::optional<Function> ClientState::get_global(const std::string& name) {
  WireValue arg = WireValue::string(name);
  uint64_t h = syscall(RPCCode::kGetGlobalFunc, std::span<const WireValue>(&arg, 1)).handle();
  if (h == 0) return std::nullopt;
  return make_function(h, name);
}

Function ClientState::make_function(uint64_t handle, std::string name) {
  auto guard = std::make_shared<RemoteHandle>(shared_from_this(), handle);
  std::string label = "remote:" + name;
  return Function::from_packed(
      [guard](Args args) -> Value { return guard->state->call_value(guard->handle, args); }, label);
}

Module ClientState::make_module(uint64_t handle) {
  return Module(make_object<RemoteModuleNode>(std::make_shared<RemoteHandle>(shared_from_this(), handle)));
}

Value ClientState::call_value(uint64_t handle, Args args) {
  std::vector<WireValue> wire;
  wire.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) wire.push_back(encode_arg(args[i], i));
  return decode_return(call(handle, wire));
}

WireValue ClientState::encode_arg(const Value& v, size_t index) {
  auto same_session = [&](const std::shared_ptr<ClientState>& s, const char* what) {
    if (s.get() != this) type_error("argument ", index, ": the ", what, " belongs to another RPC session");
  };
  switch (v.kind()) {
    case ValueKind::kNull:
      return WireValue::none();
    case ValueKind::kInt:
      return WireValue::integer(v.as_int());
    case ValueKind::kBool:
      return WireValue::boolean(v.as_bool());
    case ValueKind::kFloat:
      return WireValue::floating(v.as_float());
    case ValueKind::kHandle:
      return WireValue::opaque(reinterpret_cast<uint64_t>(v.as_handle()));
    case ValueKind::kDevice:
      return WireValue::dev(v.as_device().dl());
    case ValueKind::kDataType:
      return WireValue::data_type(v.as_dtype().dl());
    case ValueKind::kString:
      return WireValue::string(v.as_string());
    case ValueKind::kBytes:
      return WireValue::bytes(v.as_bytes());
    case ValueKind::kModule: {
      auto* remote = dynamic_cast<RemoteModuleNode*>(v.as_module().node());
      if (remote == nullptr) type_error("argument ", index, ": a local module cannot be passed to the remote; upload it and use load_module");
      same_session(remote->handle().state, "module");
      return WireValue::module(remote->handle().handle);
    }
    case ValueKind::kObject: {
      Ref<Object> obj = v.as_object();
      if (auto* t = dynamic_cast<RemoteTensorNode*>(obj.get())) {
        same_session(t->session, "tensor");
        return WireValue::tensor_ptr(t->meta);
      }
      if (auto* o = dynamic_cast<RemoteObjectNode*>(obj.get())) {
        same_session(o->handle->state, "object");
        return WireValue::object_ref(o->handle->handle);
      }
      break;
    }
    case ValueKind::kTensor:
      type_error("argument ", index, ": a tensor in this process's memory cannot be passed to a remote function; "
                 "copy it to the server first: anvil.tensor(array, sess.cpu()) in Python, "
                 "sess.upload_tensor(tensor, sess.cpu()) in C++");
    default:
      break;
  }
  type_error("argument ", index, ": a value of kind ", v.kind_name(), " cannot be passed to the remote");
}

Value ClientState::decode_return(std::vector<WireValue> reply) {
  if (reply.size() < 2 || reply[0].kind != WireKind::kInt) {
    throw ProtocolError(str_cat("CallFunc reply of ", reply.size(), " values lacks the type slot"));
  }
  auto type = static_cast<int32_t>(reply[0].i);
  const WireValue& v = reply[1];
  auto expect = [&](WireKind kind) {
    if (v.kind != kind) throw ProtocolError(str_cat("CallFunc reply of type ", type_index_name(type), " carries ", v.describe()));
  };
  switch (type) {
    case static_cast<int32_t>(TypeIndex::kNone):
      return Value();
    case static_cast<int32_t>(TypeIndex::kInt):
      expect(WireKind::kInt);
      return Value(v.i);
    case static_cast<int32_t>(TypeIndex::kBool):
      return Value(v.i != 0);
    case static_cast<int32_t>(TypeIndex::kFloat):
      expect(WireKind::kFloat);
      return Value(v.f);
    case static_cast<int32_t>(TypeIndex::kOpaquePtr):
      return Value::handle(reinterpret_cast<void*>(v.handle()));
    case static_cast<int32_t>(TypeIndex::kDataType):
      expect(WireKind::kDataType);
      return Value(DataType(v.dtype));
    case static_cast<int32_t>(TypeIndex::kDevice):
      expect(WireKind::kDevice);
      return Value(Device::from_dl(v.device));
    case static_cast<int32_t>(TypeIndex::kSmallStr):
    case static_cast<int32_t>(TypeIndex::kStr):
      expect(WireKind::kString);
      return Value(v.s);
    case static_cast<int32_t>(TypeIndex::kSmallBytes):
    case static_cast<int32_t>(TypeIndex::kBytes):
      if (v.kind != WireKind::kBytes && v.kind != WireKind::kString) expect(WireKind::kBytes);
      return Value::bytes(v.s);
    case static_cast<int32_t>(TypeIndex::kDLTensorPtr):
    case static_cast<int32_t>(TypeIndex::kTensor): {
      expect(WireKind::kTensor);
      uint64_t handle = reply.size() >= 3 ? reply[2].handle() : 0;
      return Value::object(make_object<RemoteTensorNode>(shared_from_this(), v.tensor, handle, false));
    }
    case static_cast<int32_t>(TypeIndex::kFunction):
      return Value(make_function(v.handle(), "returned"));
    case static_cast<int32_t>(TypeIndex::kModule):
      return Value(make_module(v.handle()));
    default:
      if (type < 64) throw ProtocolError(str_cat("CallFunc reply has unknown type index ", type));
      return Value::object(make_object<RemoteObjectNode>(std::make_shared<RemoteHandle>(shared_from_this(), v.handle()), type));
  }
}

std::optional<Function> RemoteModuleNode::get_local_function(const std::string& name) {
  ClientState& state = *handle_->state;
  std::optional<Function> getter = state.get_global("tvm.rpc.server.ModuleGetFunction");
  if (!getter) runtime_error("the server has no tvm.rpc.server.ModuleGetFunction");
  Value f = (*getter)(Module(Ref<ModuleNode>(this)), name, true);
  if (f.is_null()) return std::nullopt;
  return f.as_function();
}

}  // namespace anvil::rpc::detail
