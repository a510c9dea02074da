// `anvil-rpc`: the RPC command — server, tracker, proxy, query. Links the runtime and RPC libraries only,
// so it can be deployed on a device without the compiler.
#include "anvil/rpc/cli.h"

int main(int argc, char** argv) {
  using anvil::rpc::cli::Subcommand;
  static constexpr Subcommand kCommands[] = {
      {"server", "serve a device: run functions and modules sent by clients (TVM's rpc_server)",
       anvil::rpc::server_main},
      {"tracker", "schedule a farm of servers by device key (TVM's rpc_tracker)", anvil::rpc::tracker_main},
      {"proxy", "pair servers and clients that both dial in, and relay (TVM's rpc_proxy)", anvil::rpc::proxy_main},
      {"query", "print a tracker's servers and queues (TVM's query_rpc_tracker)", anvil::rpc::query_main},
  };
  return anvil::rpc::cli::dispatch(argc, argv, "anvil-rpc", "Apache TVM-compatible RPC for Anvil.", kCommands);
}
