// Entry points of the `anvil-rpc` subcommands (src/anvil/tools/anvil_rpc_main.cc dispatches to
// them). Each parses its own flags (TVM's names and defaults) and returns the process exit code.
#pragma once

#include <span>
#include <string_view>

namespace anvil::rpc {

namespace cli {
inline constexpr int kUsageError = 2;  // the exit status of every usage error (as getopt tools)
// The project's version ("0.1.0"), from CMake's project(VERSION): the one source of truth
// (cli_options.cc; `anvil-rpc --version` and each subcommand's --version print it).
std::string_view version();

// One subcommand of a multi-command tool (`anvil compile`, `anvil-rpc server`).
struct Subcommand {
  const char* name;
  const char* summary;  // one line for the tool's --help
  int (*main)(int argc, char** argv);
};
// The shared front of `anvil` and `anvil-rpc` (cli_dispatch.cc): usage and --help built from the
// table, --version, and the named subcommand run with argv[0] = "<tool> <command>".
int dispatch(int argc, char** argv, std::string_view tool, std::string_view about,
             std::span<const Subcommand> commands);
}  // namespace cli

int server_main(int argc, char** argv);   // anvil-rpc server ...  (server_cli.cc)
int tracker_main(int argc, char** argv);  // anvil-rpc tracker ... (tracker/tracker_cli.cc)
int query_main(int argc, char** argv);    // anvil-rpc query ...   (tracker/tracker_cli.cc)
int proxy_main(int argc, char** argv);    // anvil-rpc proxy ...   (proxy/proxy_cli.cc)

}  // namespace anvil::rpc
