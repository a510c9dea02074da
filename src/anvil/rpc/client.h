// The C++ RPC client: connect to an Anvil or Apache TVM RPC server and use its functions,
// devices, files and modules as if they were local.
//
//   RPCSession remote = RPCSession::connect("127.0.0.1", 9090, "my-key");
//   Function addone = remote.get_function("rpc.test.addone");
//   int64_t y = addone(10).as_int();                       // 11, computed on the server
//   RemoteTensor a = remote.upload_tensor(host, remote.cpu());
//   Tensor back = a.to_host();
//   remote.upload("model.so");  Module m = remote.load_module("model.so");
//   m["main"](a.value(), b.value());
//
// Remote functions and modules are ordinary Function/Module values whose bodies make requests;
// remote tensors and other remote objects travel inside Values as objects (RemoteTensor::value,
// RemoteTensor::from_value). Requests are serialised per session; errors raised on the server
// come back as RPCError (or RPCSessionTimeoutError) with the server's message.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/transport.h"
#include "anvil/rpc/wire.h"
#include "anvil/runtime/function.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/profiling/time_evaluator.h"
#include "anvil/runtime/tensor.h"

namespace anvil::rpc {

namespace detail {
class ClientState;
}

struct ConnectOptions {
  Limits limits;                    // replies are awaited for limits.idle_timeout_ms
  int connect_timeout_ms = 10'000;
  // The server's --auth-token (auth.h). nullopt: $ANVIL_RPC_AUTH_TOKEN if set, else none; "": none.
  // With a token the client also refuses a server that cannot prove it knows the token.
  std::optional<std::string> auth_token;
  // The session constructor the server runs at InitServer (TVM's session_constructor_args):
  // empty for an ordinary session; {"rpc.Connect", url, port, key, logging} to reach the server
  // at url:port through this one (a multi-hop session, docs/rpc.md). Strings, ints, floats,
  // bools and None.
  std::vector<Value> session_constructor_args;
};

// A tensor in the server's memory. Holding it keeps the remote memory alive.
class RemoteTensorNode final : public Object {
 public:
  RemoteTensorNode(std::shared_ptr<detail::ClientState> session, WireTensor meta, uint64_t object_handle,
                   bool owns_data);
  ~RemoteTensorNode() override;
  std::string_view type_key() const override { return "rpc.RemoteTensor"; }

  const std::shared_ptr<detail::ClientState> session;
  const WireTensor meta;          // data handle, device, dtype, shape, byte_offset (server side)
  const uint64_t object_handle;   // returned by a call: released with FreeHandle
  const bool owns_data;           // allocated by this client: released with DevFreeData
};

class RemoteTensor {
 public:
  RemoteTensor() = default;
  explicit RemoteTensor(Ref<RemoteTensorNode> node) : node_(std::move(node)) {}
  // The remote tensor inside v (as returned by a remote function), or nullopt.
  static std::optional<RemoteTensor> from_value(const Value& v);

  bool defined() const { return static_cast<bool>(node_); }
  const std::vector<int64_t>& shape() const { return node_->meta.shape; }
  DataType dtype() const { return DataType(node_->meta.dtype); }
  Device device() const { return Device::from_dl(node_->meta.device); }
  size_t nbytes() const { return static_cast<size_t>(node_->meta.nbytes()); }

  // Host -> remote. Sizes must match exactly; large copies go in chunks the server accepts.
  void copy_from(const Tensor& host);
  void copy_from_bytes(const void* data, size_t nbytes);
  // Remote -> host.
  Tensor to_host() const;
  void copy_to_bytes(void* data, size_t nbytes) const;
  // Remote -> remote: into dst (same shape and dtype). On the server (CopyAmongRemote) when dst
  // is in the same session, else through host memory.
  void copy_to(RemoteTensor dst) const;

  // The Value to pass this tensor to a remote function.
  Value value() const { return Value::object(Ref<Object>(node_)); }
  RemoteTensorNode* node() const { return node_.get(); }

 private:
  Ref<RemoteTensorNode> node_;
};

// The connection under RPCSession::connect: TCP, the handshake with "client:<key>[ -timeout=]",
// the auth challenge, then InitServer with `ctor_args` (options.session_constructor_args is not
// read). Returns the endpoint, ready for requests; *remote_key gets the server's key.
Endpoint connect_endpoint(const std::string& url, int port, const std::string& key, double session_timeout,
                          const ConnectOptions& options, std::span<const WireValue> ctor_args,
                          std::string* remote_key);

class RPCSession {
 public:
  RPCSession() = default;
  // TCP connect + handshake ("client:<key>[ -timeout=<t>]") + the auth challenge when the server
  // or options.auth_token asks for it + InitServer. Errors as TVM words them ("... cannot find
  // server that matches key=..."). Works the same through an RPC proxy (url, port = the proxy's).
  static RPCSession connect(const std::string& url, int port, const std::string& key = "",
                            double session_timeout = 0, const ConnectOptions& options = {});
  // A session over a connected channel with no handshake (pipes to a child server): InitServer only.
  static RPCSession over_channel(Channel channel, const ConnectOptions& options = {});
  // Starts `argv` (an Anvil server) as a child process that serves one session over two pipes
  // ("--pipe-fds R,W" is appended), and connects to it: connect_popen (spawn_session.h) with
  // the default PopenOptions, so the child is reaped when the session closes.
  static RPCSession spawn(const std::vector<std::string>& argv, const ConnectOptions& options = {});

  bool defined() const { return static_cast<bool>(state_); }
  bool is_open() const;
  // Sends kShutdown and closes. Remote objects still held fail on use.
  void close();
  const std::string& remote_key() const;

  std::optional<Function> find_function(const std::string& name);
  Function get_function(const std::string& name);  // ValueError when the server has none

  Device device(DLDeviceType type, int32_t id = 0) const { return Device{type, id}; }
  Device cpu(int32_t id = 0) const { return Device::cpu(id); }
  void sync(Device dev);

  RemoteTensor empty(std::span<const int64_t> shape, DataType dtype, Device dev);
  RemoteTensor upload_tensor(const Tensor& host, Device dev);

  // Files in the server's session directory.
  void upload(const std::string& local_path, const std::string& target = "");
  void upload_bytes(const std::string& data, const std::string& target);
  std::string download(const std::string& path);
  void remove(const std::string& path);
  std::vector<std::string> listdir(const std::string& path = ".");
  Module load_module(const std::string& path);
  std::string download_linked_module(const std::string& path);
  Module system_lib();

  // runtime.RPCTimeEvaluator on the server: the returned Function runs `name` of `module` with
  // its arguments and returns an array of floats, seconds per call for each repeat.
  Function time_evaluator(const Module& module, const std::string& name, Device dev,
                          const TimeEvaluatorOptions& options = {});

 private:
  explicit RPCSession(std::shared_ptr<detail::ClientState> state) : state_(std::move(state)) {}
  detail::ClientState& state() const;
  std::shared_ptr<detail::ClientState> state_;
};

}  // namespace anvil::rpc
