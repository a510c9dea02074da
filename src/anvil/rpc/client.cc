// RPCSession and RemoteTensor (see client.h): connection set-up, file and module helpers, and
// remote tensor allocation and copies on top of ClientState.
#include "anvil/rpc/client.h"
#include "anvil/rpc/spawn_session.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include "anvil/rpc/auth.h"
#include "anvil/rpc/client_state.h"
#include "anvil/rpc/handshake.h"

namespace anvil::rpc {

// ---- RemoteTensor ----

RemoteTensorNode::RemoteTensorNode(std::shared_ptr<detail::ClientState> session, WireTensor meta,
                                   uint64_t object_handle, bool owns_data)
    : session(std::move(session)), meta(std::move(meta)), object_handle(object_handle), owns_data(owns_data) {}

RemoteTensorNode::~RemoteTensorNode() {
  // A returned tensor is released through its object handle, never its data pointer (TVM #18923).
  if (object_handle != 0) session->free_handle(object_handle);
  if (owns_data) session->free_data(meta.device, meta.data);
}

std::optional<RemoteTensor> RemoteTensor::from_value(const Value& v) {
  if (v.kind() != ValueKind::kObject) return std::nullopt;
  Ref<Object> obj = v.as_object();
  auto* node = dynamic_cast<RemoteTensorNode*>(obj.get());
  if (node == nullptr) return std::nullopt;
  return RemoteTensor(Ref<RemoteTensorNode>(node));
}

void RemoteTensor::copy_from_bytes(const void* data, size_t nbytes) {
  if (nbytes != this->nbytes()) value_error("RemoteTensor::copy_from_bytes: ", nbytes, " bytes for a tensor of ", this->nbytes());
  node_->session->copy_to_remote(node_->meta, data, nbytes);
}

void RemoteTensor::copy_from(const Tensor& host) {
  if (host.device().type != kDLCPU) value_error("RemoteTensor::copy_from: the source must be a CPU tensor");
  if (host.shape() != shape() || !(host.dtype() == dtype())) {
    value_error("RemoteTensor::copy_from: ", host.to_string(), " does not match the remote ", shape_to_string(shape()),
                " ", dtype());
  }
  if (host.is_contiguous()) {
    copy_from_bytes(host.data(), host.nbytes());
    return;
  }
  Tensor compact = Tensor::empty(host.shape(), host.dtype());
  compact.copy_from(host);
  copy_from_bytes(compact.data(), compact.nbytes());
}

void RemoteTensor::copy_to_bytes(void* data, size_t nbytes) const {
  if (nbytes != this->nbytes()) value_error("RemoteTensor::copy_to_bytes: ", nbytes, " bytes for a tensor of ", this->nbytes());
  node_->session->copy_from_remote(node_->meta, data, nbytes);
}

void RemoteTensor::copy_to(RemoteTensor dst) const {
  if (dst.shape() != shape() || !(dst.dtype() == dtype())) {
    value_error("RemoteTensor::copy_to: a ", shape_to_string(shape()), " ", dtype(), " tensor cannot be copied into a ",
                shape_to_string(dst.shape()), " ", dst.dtype(), " one");
  }
  if (dst.node_->session != node_->session) {
    dst.copy_from(to_host());
    return;
  }
  WireValue args[] = {WireValue::tensor_ptr(node_->meta), WireValue::tensor_ptr(dst.node_->meta), WireValue::none()};
  node_->session->syscall(RPCCode::kCopyAmongRemote, args);
}

Tensor RemoteTensor::to_host() const {
  Tensor out = Tensor::empty(shape(), dtype());
  copy_to_bytes(out.data(), out.nbytes());
  return out;
}

// ---- RPCSession ----

namespace {

// A session-constructor argument on the wire: the scalar kinds TVM's constructors take.
WireValue constructor_arg(const Value& v, size_t index) {
  switch (v.kind()) {
    case ValueKind::kNull:
      return WireValue::none();
    case ValueKind::kInt:
      return WireValue::integer(v.as_int());
    case ValueKind::kBool:
      return WireValue::boolean(v.as_bool());
    case ValueKind::kFloat:
      return WireValue::floating(v.as_float());
    case ValueKind::kString:
      return WireValue::string(v.as_string());
    default:
      type_error("session_constructor_args[", index, "]: a ", v.kind_name(),
                 " cannot be sent; the arguments must be strings, ints, floats, bools or None");
  }
}

}  // namespace

Endpoint connect_endpoint(const std::string& url, int port, const std::string& key, double session_timeout,
                          const ConnectOptions& options, std::span<const WireValue> ctor_args,
                          std::string* remote_key) {
  std::string where = str_cat(url, ":", port);
  Channel ch = tcp_connect(url, port, options.connect_timeout_ms);
  *remote_key = connect_handshake(ch, client_key_string(key, session_timeout), where, options.limits);
  client_authenticate(ch, resolve_client_token(options.auth_token), *remote_key, where, options.limits);
  Endpoint ep(std::move(ch), options.limits);
  ep.init_server(ctor_args);
  return ep;
}

RPCSession RPCSession::connect(const std::string& url, int port, const std::string& key, double session_timeout,
                               const ConnectOptions& options) {
  std::vector<WireValue> ctor;
  for (size_t i = 0; i < options.session_constructor_args.size(); ++i) {
    ctor.push_back(constructor_arg(options.session_constructor_args[i], i));
  }
  if (!ctor.empty() && ctor[0].kind != WireKind::kString) {
    type_error("session_constructor_args[0] must be the constructor's name (a string), not ", ctor[0].describe());
  }
  std::string remote_key;
  Endpoint ep = connect_endpoint(url, port, key, session_timeout, options, ctor, &remote_key);
  return RPCSession(std::make_shared<detail::ClientState>(std::move(ep), std::move(remote_key)));
}

RPCSession RPCSession::over_channel(Channel channel, const ConnectOptions& options) {
  Endpoint ep(std::move(channel), options.limits);
  ep.init_server();
  return RPCSession(std::make_shared<detail::ClientState>(std::move(ep), ""));
}

RPCSession RPCSession::spawn(const std::vector<std::string>& argv, const ConnectOptions& options) {
  if (argv.empty()) value_error("RPCSession::spawn: empty command");
  PopenOptions popen;
  popen.connect = options;
  return connect_popen(argv, popen);  // a reaped child, its death reported by signal
}

detail::ClientState& RPCSession::state() const {
  if (!state_) runtime_error("RPCSession: not connected");
  return *state_;
}

bool RPCSession::is_open() const { return state_ && state_->is_open(); }
void RPCSession::close() {
  if (state_) state_->close();
}
const std::string& RPCSession::remote_key() const { return state().remote_key(); }

std::optional<Function> RPCSession::find_function(const std::string& name) { return state().get_global(name); }

Function RPCSession::get_function(const std::string& name) {
  std::optional<Function> f = find_function(name);
  if (!f) value_error("the RPC server has no function named '", name, "'");
  return *f;
}

void RPCSession::sync(Device dev) {
  WireValue args[] = {WireValue::dev(dev.dl()), WireValue::opaque(0)};
  state().syscall(RPCCode::kDevStreamSync, args);
}

RemoteTensor RPCSession::empty(std::span<const int64_t> shape, DataType dtype, Device dev) {
  WireTensor meta;
  meta.device = dev.dl();
  meta.dtype = dtype.dl();
  meta.shape.assign(shape.begin(), shape.end());
  WireValue args[] = {WireValue::tensor_ptr(meta), WireValue::none()};
  meta.data = state().syscall(RPCCode::kDevAllocDataWithScope, args).handle();
  if (meta.data == 0 && meta.nbytes() != 0) runtime_error("the server returned a null allocation");
  return RemoteTensor(make_object<RemoteTensorNode>(state_, std::move(meta), 0, /*owns_data=*/true));
}

RemoteTensor RPCSession::upload_tensor(const Tensor& host, Device dev) {
  RemoteTensor t = empty(host.shape(), host.dtype(), dev);
  t.copy_from(host);
  return t;
}

void RPCSession::upload(const std::string& local_path, const std::string& target) {
  std::ifstream in(local_path, std::ios::binary);
  if (!in) io_error("upload: cannot open ", local_path);
  std::ostringstream data;
  data << in.rdbuf();
  std::string name = target;
  if (name.empty()) {
    size_t slash = local_path.find_last_of('/');
    name = slash == std::string::npos ? local_path : local_path.substr(slash + 1);
  }
  upload_bytes(data.str(), name);
}

void RPCSession::upload_bytes(const std::string& data, const std::string& target) {
  if (target.empty()) value_error("upload_bytes: the target name is empty");
  get_function("tvm.rpc.server.upload")(target, Value::bytes(data));
}

std::string RPCSession::download(const std::string& path) {
  return get_function("tvm.rpc.server.download")(path).as_bytes();
}

void RPCSession::remove(const std::string& path) { get_function("tvm.rpc.server.remove")(path); }

std::vector<std::string> RPCSession::listdir(const std::string& path) {
  std::string joined = get_function("tvm.rpc.server.listdir")(path).as_string();
  std::vector<std::string> out;
  std::stringstream in(joined);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

Module RPCSession::load_module(const std::string& path) {
  return get_function("tvm.rpc.server.load_module")(path).as_module();
}

std::string RPCSession::download_linked_module(const std::string& path) {
  return get_function("tvm.rpc.server.download_linked_module")(path).as_bytes();
}

Module RPCSession::system_lib() { return get_function("ffi.SystemLib")().as_module(); }

Function RPCSession::time_evaluator(const Module& module, const std::string& name, Device dev,
                                    const TimeEvaluatorOptions& o) {
  o.validate("RPCSession::time_evaluator");
  Value mod = module.defined() ? Value(module) : Value();
  Function remote = get_function("runtime.RPCTimeEvaluator")(
                        mod, name, static_cast<int64_t>(dev.type), dev.id, o.number, o.repeat, o.min_repeat_ms,
                        o.limit_zero_time_iterations, o.cooldown_interval_ms, o.repeats_to_cooldown,
                        o.cache_flush_bytes, std::string())
                        .as_function();
  return Function::from_packed(
      [remote](Args args) -> Value {
        Value result = remote.call(args);
        const std::string& blob = result.as_bytes();
        if (blob.size() % sizeof(double) != 0) runtime_error("time_evaluator: the server sent ", blob.size(), " bytes");
        std::vector<Value> seconds;
        for (size_t i = 0; i < blob.size(); i += sizeof(double)) {
          double s;
          std::memcpy(&s, blob.data() + i, sizeof s);
          seconds.emplace_back(s);
        }
        return Value(std::move(seconds));
      },
      "remote_time_evaluator." + name);
}

}  // namespace anvil::rpc
