// `anvil`: the compiler command — compile an ONNX model, run a compiled model (here or on an RPC
// device), inspect either. `anvil-rpc` is the runtime-only sibling (server, tracker, proxy).
#include <cstdio>
#include <cstring>
#include <string>

#include "anvil/rpc/cli.h"
#include "anvil/tools/anvil_commands.h"

namespace {

void print_usage(const char* program) {
  std::printf(
      "usage: %s <command> [options]\n"
      "\n"
      "Anvil: compile ONNX models into one library and run it on the VM, here or on an RPC device.\n"
      "\n"
      "commands:\n"
      "  compile   model.onnx -> model.so (import, graph passes, kernels, link)\n"
      "  run       run model.so: inputs from .npz or generated, outputs, latency, --profile, --rpc\n"
      "  inspect   describe model.onnx or model.so: inputs, outputs, operators, kernels, memory plan\n"
      "\n"
      "Run '%s <command> --help' for the options of a command; --version prints the version.\n",
      program, program);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    print_usage(argv[0]);
    return argc < 2 ? anvil::rpc::cli::kUsageError : 0;
  }
  if (std::strcmp(argv[1], "--version") == 0) {
    std::string_view version = anvil::rpc::cli::version();
    std::printf("anvil %.*s\n", static_cast<int>(version.size()), version.data());
    return 0;
  }
  std::string command = argv[1];
  std::string program = std::string(argv[0]) + " " + command;
  argv[1] = program.data();
  if (command == "compile") return anvil::tools::compile_main(argc - 1, argv + 1);
  if (command == "run") return anvil::tools::run_main(argc - 1, argv + 1);
  if (command == "inspect") return anvil::tools::inspect_main(argc - 1, argv + 1);
  std::fprintf(stderr, "%s: error: unknown command '%s' (expected compile, run or inspect; see --help)\n", argv[0],
               command.c_str());
  return anvil::rpc::cli::kUsageError;
}
