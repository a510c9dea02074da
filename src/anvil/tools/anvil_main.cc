// `anvil`: the compiler command — compile an ONNX model, run a compiled model (here or on an RPC
// device), inspect either. `anvil-rpc` is the runtime-only sibling (server, tracker, proxy).
#include "anvil/rpc/cli.h"
#include "anvil/tools/anvil_commands.h"

int main(int argc, char** argv) {
  using anvil::rpc::cli::Subcommand;
  static constexpr Subcommand kCommands[] = {
      {"compile", "model.onnx -> model.so (import, graph passes, kernels, link)", anvil::tools::compile_main},
      {"run", "run model.so: inputs from .npz or generated, outputs, latency, --profile, --rpc",
       anvil::tools::run_main},
      {"inspect", "describe model.onnx or model.so: inputs, outputs, operators, kernels, memory plan",
       anvil::tools::inspect_main},
  };
  return anvil::rpc::cli::dispatch(
      argc, argv, "anvil",
      "Anvil: compile ONNX models into one library and run it on the VM, here or on an RPC device.", kCommands);
}
