// Remote run over Anvil's RPC client (works against anvil-rpc server and TVM's servers).
#include "anvil/tools/remote_run.h"

#include <filesystem>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/client.h"
#include "anvil/rpc/tracker_client.h"

namespace anvil::tools {
namespace {

rpc::RPCSession open_session(const RemoteTarget& where) {
  if (!where.tracker.empty()) {
    rpc::TrackerMatch m = rpc::request_server(where.tracker, where.key, 1, 60'000);
    return rpc::RPCSession::connect(m.host, m.port, m.match_key);
  }
  rpc::HostPort hp = rpc::parse_host_port(where.rpc, "--rpc");
  return rpc::RPCSession::connect(hp.host, hp.port, where.key);
}

// The outputs: one remote tensor, or the items of a remote array (a tuple result), fetched
// through the server's ffi.ArraySize / ffi.ArrayGetItem.
std::vector<Value> as_list(rpc::RPCSession& session, const Value& v) {
  if (v.kind() == ValueKind::kArray) return v.as_array();
  if (rpc::RemoteTensor::from_value(v)) return {v};
  int64_t n = session.get_function("ffi.ArraySize")(v).as_int();
  Function get = session.get_function("ffi.ArrayGetItem");
  std::vector<Value> items;
  for (int64_t i = 0; i < n; ++i) items.push_back(get(v, i));
  return items;
}

}  // namespace

RunResult run_remote(const RemoteTarget& where, const std::string& library, int repeat, int warmup,
                     const std::function<std::vector<NamedTensor>(const ModelInfo&)>& prepare_inputs) {
  if (!std::filesystem::is_regular_file(library)) io_error("cannot read '", library, "'");
  rpc::RPCSession session = open_session(where);
  std::string name = std::filesystem::path(library).filename().string();
  session.upload(library, name);
  Module lib = session.load_module(name);
  Module vm = lib.get_function("vm_load_executable")().as_module();
  ModelInfo info;
  if (std::optional<Function> f = vm.find_function("__anvil_model_info")) info = parse_model_info((*f)().as_string());
  else value_error(library, ": the library carries no __anvil_model_info (not made by anvil compile)");
  RunResult r;
  r.inputs = prepare_inputs(info);
  std::vector<rpc::RemoteTensor> remote_inputs;
  std::vector<Value> args;
  for (const NamedTensor& t : r.inputs) {
    remote_inputs.push_back(session.upload_tensor(t.tensor, session.cpu()));
    args.push_back(remote_inputs.back().value());
  }
  Function main = vm.get_function("main");
  Value out;
  for (int i = 0; i < std::max(1, warmup); ++i) out = main.call(Args(args.data(), args.size()));
  std::vector<Value> outs = as_list(session, out);
  for (size_t i = 0; i < outs.size(); ++i) {
    std::optional<rpc::RemoteTensor> t = rpc::RemoteTensor::from_value(outs[i]);
    if (!t) value_error("remote main returned a non-tensor as output ", i);
    std::string oname = i < info.outputs.size() ? info.outputs[i].name : "output_" + std::to_string(i);
    r.outputs.push_back({oname, t->to_host()});
  }
  if (repeat > 0) {
    TimeEvaluatorOptions opts;
    opts.number = 1;
    opts.repeat = repeat;
    Function timer = session.time_evaluator(vm, "main", session.cpu(), opts);
    Value seconds = timer.call(Args(args.data(), args.size()));  // keep it alive while reading
    for (const Value& s : seconds.as_array()) r.latencies_ms.push_back(s.as_float() * 1e3);
  }
  try {
    session.remove(name);
  } catch (const Error&) {
    // best effort: the server's session directory goes away with the session anyway
  }
  return r;
}

}  // namespace anvil::tools
