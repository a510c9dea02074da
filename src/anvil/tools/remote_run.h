// `anvil run --rpc host:port` / `--rpc-tracker host:port --rpc-key K`: the compile-here,
// run-there flow. Uploads the library, loads it on the server, makes a VM there
// ("vm_load_executable"), uploads the inputs, runs main on remote tensors, times it with the
// server's time evaluator (so the network is not in the figures) and brings the outputs back.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anvil/tools/model_info.h"
#include "anvil/tools/tensor_summary.h"

namespace anvil::tools {

struct RemoteTarget {
  std::string rpc;      // host:port of a server, or
  std::string tracker;  // host:port of a tracker, with
  std::string key;      // the device key (also presented to a direct server)
};

// prepare_inputs gets the model's description (read on the server) and returns the inputs.
RunResult run_remote(const RemoteTarget& where, const std::string& library, int repeat, int warmup,
                     const std::function<std::vector<NamedTensor>(const ModelInfo&)>& prepare_inputs);

}  // namespace anvil::tools
