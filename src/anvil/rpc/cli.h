// Entry points of the `anvil-rpc` subcommands (src/anvil/tools/anvil_rpc_main.cc dispatches to
// them). Each parses its own flags (TVM's names and defaults) and returns the process exit code.
#pragma once

namespace anvil::rpc {

int server_main(int argc, char** argv);   // anvil-rpc server ...  (server_cli.cc)
int tracker_main(int argc, char** argv);  // anvil-rpc tracker ... (tracker/tracker_cli.cc)
int query_main(int argc, char** argv);    // anvil-rpc query ...   (tracker/tracker_cli.cc)
int proxy_main(int argc, char** argv);    // anvil-rpc proxy ...   (proxy/proxy_cli.cc)

}  // namespace anvil::rpc
