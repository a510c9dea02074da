// `anvil run model.so`: load a compiled model, feed it (.npz or generated inputs), run it on
// the VM here or on an RPC server, print output summaries and latency; --profile adds the
// per-kernel table, --json one machine-readable object.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "anvil/base/error.h"
#include "anvil/rpc/cli_options.h"
#include "anvil/runtime/device_api.h"
#include "anvil/runtime/module/module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/threading/thread_pool.h"
#include "anvil/runtime/vm/profiler.h"
#include "anvil/runtime/vm/vm.h"
#include "anvil/tools/anvil_commands.h"
#include "anvil/tools/model_info.h"
#include "anvil/tools/npz.h"
#include "anvil/tools/remote_run.h"
#include "anvil/tools/tensor_summary.h"

namespace anvil::tools {
namespace {

struct RunFlags {
  std::string library, inputs_path, outputs_path, fill = "random", shapes_text;
  std::string rpc, tracker, key;
  int repeat = 10, warmup = 1, threads = 0;
  uint64_t seed = 0;
  bool profile = false, json = false;
};

Tensor generated_input(const TensorInfo& info, const std::vector<int64_t>& shape, const std::string& fill,
                       std::mt19937_64& rng) {
  DataType dtype = DataType::parse(info.dtype.empty() ? "float32" : info.dtype);
  Tensor t = Tensor::empty(shape, dtype);
  int64_t n = t.numel();
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(0, 9);
  for (int64_t i = 0; i < n; ++i) {
    double v = fill == "zeros" ? 0.0 : fill == "ones" ? 1.0 : (dtype.is_float() ? uni(rng) : double(small(rng)));
    set_element(t, i, v);
  }
  return t;
}

std::vector<NamedTensor> prepare_inputs(const RunFlags& f, const ModelInfo& info, std::vector<std::string>* notes) {
  if (!f.inputs_path.empty()) {
    std::vector<NamedTensor> given = read_npz(f.inputs_path);
    std::map<std::string, Tensor> by_name;
    for (auto& g : given) by_name[g.name] = g.tensor;
    std::vector<NamedTensor> out;
    for (const TensorInfo& in : info.inputs) {
      auto it = by_name.find(in.name);
      if (it == by_name.end()) {
        std::string have;
        for (auto& g : given) have += (have.empty() ? "" : ", ") + g.name;
        value_error(f.inputs_path, " has no array '", in.name, "' (the model's input; the file has: ", have, ")");
      }
      if (!in.dtype.empty() && it->second.dtype() != DataType::parse(in.dtype))
        value_error(f.inputs_path, ": '", in.name, "' is ", it->second.dtype(), " but the model takes ", in.dtype);
      out.push_back({in.name, it->second});
      by_name.erase(it);
    }
    for (auto& [name, t] : by_name) notes->push_back("ignored array '" + name + "' of " + f.inputs_path + " (no such input)");
    return out;
  }
  std::map<std::string, std::vector<int64_t>> pinned = parse_input_shapes(f.shapes_text);
  std::mt19937_64 rng(f.seed);
  std::vector<NamedTensor> out;
  for (const TensorInfo& in : info.inputs) {
    auto it = pinned.find(in.name);
    std::vector<std::string> defaulted;
    std::vector<int64_t> shape = concrete_shape(in, it == pinned.end() ? nullptr : &it->second, &defaulted);
    for (const std::string& d : defaulted)
      notes->push_back("input '" + in.name + "': symbolic dim '" + d + "' set to 1 (pin it with --input-shapes)");
    out.push_back({in.name, generated_input(in, shape, f.fill, rng)});
  }
  return out;
}

std::vector<NamedTensor> name_outputs(const Value& result, const ModelInfo& info) {
  std::vector<Tensor> ts;
  if (result.kind() == ValueKind::kArray) {
    for (const Value& v : result.as_array()) ts.push_back(v.as_tensor());
  } else {
    ts.push_back(result.as_tensor());
  }
  std::vector<NamedTensor> out;
  for (size_t i = 0; i < ts.size(); ++i) {
    std::string name = i < info.outputs.size() ? info.outputs[i].name : "output_" + std::to_string(i);
    out.push_back({name, ts[i].device().type == kDLCPU ? ts[i] : ts[i].copy_to(Device::cpu())});
  }
  return out;
}

// The device a compiled model keeps its tensors on: that of its target's kind ("llvm ..." -> cpu,
// "vulkan ..." -> vulkan:0; device_types.def names the target kinds), from the model info.
Device model_device(const ModelInfo& info) {
  if (info.json.empty()) return Device::cpu();
  nlohmann::json j = nlohmann::json::parse(info.json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("target") || !j["target"].is_string()) return Device::cpu();
  std::string target = j["target"].get<std::string>();
  return Device::parse(target.substr(0, target.find(' ')));
}

int run(const RunFlags& f) {
  if (f.threads > 0) runtime::ThreadPool::global().resize(f.threads);
  std::vector<std::string> notes;
  RunResult r;
  ModelInfo info;
  if (!f.rpc.empty() || !f.tracker.empty()) {
    RemoteTarget where{f.rpc, f.tracker, f.key};
    r = run_remote(where, f.library, f.repeat, f.warmup, [&](const ModelInfo& i) {
      info = i;
      return prepare_inputs(f, i, &notes);
    });
  } else {
    register_runtime_functions();
    Module lib = Module::load_from_file(f.library);
    vm::VirtualMachine machine = vm::VirtualMachine::create(lib, {Device::cpu()});
    info = read_model_info(machine);
    // A model for a GPU target runs there: its VM allocates on the device, inputs go over first,
    // and each timed run waits for the device's work.
    Device dev = model_device(info);
    if (dev.type != kDLCPU) machine = vm::VirtualMachine::create(lib, {dev, Device::cpu()});
    std::vector<NamedTensor> inputs = prepare_inputs(f, info, &notes);
    std::vector<Value> args;
    for (const NamedTensor& t : inputs) args.push_back(Value(dev.type == kDLCPU ? t.tensor : t.tensor.copy_to(dev)));
    r.inputs = inputs;
    Function main = machine["main"];
    auto call = [&] {
      Value v = main.call(Args(args.data(), args.size()));
      if (dev.type != kDLCPU) DeviceAPI::get(dev)->sync(dev, nullptr);
      return v;
    };
    Value out;
    for (int i = 0; i < std::max(1, f.warmup); ++i) out = call();
    for (int i = 0; i < f.repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      out = call();
      r.latencies_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    r.outputs = name_outputs(out, info);
    if (f.profile) {
      Ref<vm::ProfileReportNode> report = vm::profile(machine.get(), "main", Args(args.data(), args.size()));
      r.profile_table = report->table();
      r.profile_json = report->json();
    }
  }
  if (!f.outputs_path.empty()) write_npz(f.outputs_path, r.outputs);
  LatencyStats stats = latency_stats(r.latencies_ms);
  if (f.json) {
    nlohmann::json j;
    j["library"] = f.library;
    j["where"] = f.rpc.empty() && f.tracker.empty() ? "local" : (f.rpc.empty() ? "tracker " + f.tracker + " key " + f.key : "rpc " + f.rpc);
    for (const NamedTensor& t : r.inputs) j["inputs"].push_back(nlohmann::json::parse(summary_json(t)));
    for (const NamedTensor& t : r.outputs) j["outputs"].push_back(nlohmann::json::parse(summary_json(t)));
    j["latency_ms"] = {{"repeat", r.latencies_ms.size()}, {"mean", stats.mean}, {"median", stats.median},
                       {"std", stats.std}, {"min", stats.min}, {"max", stats.max}};
    if (!r.profile_json.empty()) j["profile"] = nlohmann::json::parse(r.profile_json);
    j["notes"] = notes;
    std::cout << j.dump() << "\n";
    return 0;
  }
  for (const std::string& n : notes) std::cerr << "anvil run: note: " << n << "\n";
  std::cout << "inputs:\n";
  for (const NamedTensor& t : r.inputs) std::cout << "  " << summary_line(t) << "\n";
  std::cout << "outputs:\n";
  for (const NamedTensor& t : r.outputs) std::cout << "  " << summary_line(t) << "\n";
  if (!r.latencies_ms.empty()) {
    std::printf("latency over %zu runs (ms): mean %.3f  median %.3f  std %.3f  min %.3f  max %.3f\n",
                r.latencies_ms.size(), stats.mean, stats.median, stats.std, stats.min, stats.max);
  }
  if (!r.profile_table.empty()) std::cout << "\nprofile (one run):\n" << r.profile_table;
  return 0;
}

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{"Run a compiled model (anvil compile's library) on the VM, here or on an RPC server.", "anvil run"};
  rpc::cli::setup(app);
  RunFlags f;
  app.add_option("library", f.library, "the compiled model (.so)")->required();
  auto* inputs = app.add_option("--inputs", f.inputs_path, ".npz of the inputs, keyed by the model's input names");
  app.add_option("--fill", f.fill, "generated inputs when --inputs is absent: random (default; floats in [-1, 1), ints in [0, 10)), zeros, ones")
      ->check(CLI::IsMember({"random", "zeros", "ones"}))
      ->excludes(inputs);
  app.add_option("--input-shapes", f.shapes_text, "shapes of generated inputs with symbolic dims: name:1x3x224x224,...")
      ->excludes(inputs);
  app.add_option("--seed", f.seed, "seed of the random inputs (default 0)");
  app.add_option("--outputs", f.outputs_path, "write the outputs to this .npz, keyed by the model's output names");
  app.add_option("--repeat", f.repeat, "timed runs after the warm-up (default 10)")->check(CLI::Range(0, 1000000));
  app.add_option("--warmup", f.warmup, "untimed runs first (default 1)")->check(CLI::Range(0, 1000000));
  app.add_option("--threads", f.threads, "worker threads (default: ANVIL_NUM_THREADS or the physical cores)")
      ->check(CLI::Range(1, 4096));
  app.add_flag("--profile", f.profile, "print the per-kernel time table of one run");
  app.add_flag("--json", f.json, "print one JSON object instead of the text report");
  auto* rpc_opt = app.add_option("--rpc", f.rpc, "run on the RPC server at host:port (anvil-rpc server or TVM's)")
                      ->check(rpc::cli::host_port());
  auto* tracker = app.add_option("--rpc-tracker", f.tracker, "ask this tracker (host:port) for a server of --rpc-key")
                      ->check(rpc::cli::host_port())
                      ->excludes(rpc_opt);
  app.add_option("--rpc-key", f.key, "the device key: with --rpc-tracker the key to request, with --rpc the server's key");
  if (auto code = rpc::cli::parse(app, argc, argv)) return *code;
  if (tracker->count() > 0 && f.key.empty()) return rpc::cli::usage_error(app, "--rpc-tracker needs --rpc-key");
  try {
    return run(f);
  } catch (const Error& e) {
    std::cerr << "anvil run: error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace anvil::tools
