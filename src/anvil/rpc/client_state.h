// ClientState: the shared core of a client session — the Endpoint, the lock that keeps requests
// one at a time, argument encoding and return decoding (spec §2.7, §2.8), and the release of
// remote handles when the local objects standing for them die. RPCSession (client.h) and every
// remote function, module, tensor and object hold a shared_ptr to it, so the connection lives
// as long as anything that can use it.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "anvil/rpc/endpoint.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/module/module.h"

namespace anvil::rpc::detail {

class ClientState : public std::enable_shared_from_this<ClientState> {
 public:
  ClientState(Endpoint endpoint, std::string remote_key);
  ~ClientState();  // sends kShutdown if still open

  const std::string& remote_key() const { return remote_key_; }
  bool is_open();
  void close();

  // One request at a time; ChannelError when the session is closed.
  std::vector<WireValue> call(uint64_t handle, std::span<const WireValue> args);
  WireValue syscall(RPCCode code, std::span<const WireValue> args);
  void copy_to_remote(const WireTensor& dst, const void* data, uint64_t nbytes);
  void copy_from_remote(const WireTensor& src, void* out, uint64_t nbytes);

  // Releases, best effort and never throwing: sent now when the connection is idle, else queued
  // and sent before the next request.
  void free_handle(uint64_t handle);
  void free_data(DLDevice device, uint64_t data);

  // Function-level helpers.
  std::optional<Function> get_global(const std::string& name);
  Value call_value(uint64_t handle, Args args);  // encode, call, decode
  WireValue encode_arg(const Value& v, size_t index);
  Value decode_return(std::vector<WireValue> reply);
  Function make_function(uint64_t handle, std::string name);
  Module make_module(uint64_t handle);

 private:
  // Runs one request under the lock; closes the connection when the stream breaks.
  template <typename F>
  auto guarded(F&& request);
  void copy_to_remote_locked(const WireTensor& dst, const void* data, uint64_t nbytes);
  void copy_from_remote_locked(const WireTensor& src, void* out, uint64_t nbytes);
  void flush_releases_locked();
  uint64_t max_packet_bytes_locked();
  void check_open_locked() const;

  std::mutex request_mutex_;
  Endpoint endpoint_;
  std::string remote_key_;
  std::optional<uint64_t> max_packet_;  // the server's GetCRTMaxPacketSize, asked once

  std::mutex release_mutex_;
  std::vector<uint64_t> pending_handles_;
  std::vector<std::pair<DLDevice, uint64_t>> pending_data_;
};

// Keeps one remote handle alive; the last copy frees it on the server.
struct RemoteHandle {
  std::shared_ptr<ClientState> state;
  uint64_t handle = 0;
  RemoteHandle(std::shared_ptr<ClientState> s, uint64_t h) : state(std::move(s)), handle(h) {}
  ~RemoteHandle() {
    if (handle != 0) state->free_handle(handle);
  }
  RemoteHandle(const RemoteHandle&) = delete;
  RemoteHandle& operator=(const RemoteHandle&) = delete;
};

// A module on the server (kind "rpc"): functions are looked up remotely through
// tvm.rpc.server.ModuleGetFunction.
class RemoteModuleNode final : public ModuleNode {
 public:
  explicit RemoteModuleNode(std::shared_ptr<RemoteHandle> handle) : handle_(std::move(handle)) {}
  std::string kind() const override { return "rpc"; }
  std::optional<Function> get_local_function(const std::string& name) override;
  const RemoteHandle& handle() const { return *handle_; }

 private:
  std::shared_ptr<RemoteHandle> handle_;
};

// Any other object on the server (a Shape, an Array, ...): passed back as RPCObjectRef.
class RemoteObjectNode final : public Object {
 public:
  RemoteObjectNode(std::shared_ptr<RemoteHandle> handle, int32_t type_index)
      : handle(std::move(handle)), type_index(type_index) {}
  std::string_view type_key() const override { return "rpc.RemoteObject"; }
  const std::shared_ptr<RemoteHandle> handle;
  const int32_t type_index;  // the server's type index (69 Shape, 71 Array, ...)
};

}  // namespace anvil::rpc::detail
