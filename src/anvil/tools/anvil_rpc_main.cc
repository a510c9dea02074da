// `anvil-rpc`: the RPC command — server, tracker, proxy, query. Links the runtime and RPC libraries only,
// so it can be deployed on a device without the compiler.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "anvil/rpc/cli.h"

namespace {

void print_usage(const char* program) {
  std::printf(
      "usage: %s <command> [options]\n"
      "\n"
      "Apache TVM-compatible RPC for Anvil.\n"
      "\n"
      "commands:\n"
      "  server    serve a device: run functions and modules sent by clients (TVM's rpc_server)\n"
      "  tracker   schedule a farm of servers by device key (TVM's rpc_tracker)\n"
      "  proxy     pair servers and clients that both dial in, and relay (TVM's rpc_proxy)\n"
      "  query     print a tracker's servers and queues (TVM's query_rpc_tracker)\n"
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
    std::printf("anvil-rpc %.*s\n", static_cast<int>(version.size()), version.data());
    return 0;
  }
  std::string command = argv[1];
  // The subcommand sees itself as argv[0], as if run on its own.
  std::string program = std::string(argv[0]) + " " + command;
  argv[1] = program.data();
  if (command == "server") return anvil::rpc::server_main(argc - 1, argv + 1);
  if (command == "tracker") return anvil::rpc::tracker_main(argc - 1, argv + 1);
  if (command == "query") return anvil::rpc::query_main(argc - 1, argv + 1);
  if (command == "proxy") return anvil::rpc::proxy_main(argc - 1, argv + 1);
  std::fprintf(stderr, "%s: error: unknown command '%s' (expected server, tracker, proxy or query; see --help)\n",
               argv[0], command.c_str());
  return anvil::rpc::cli::kUsageError;
}
