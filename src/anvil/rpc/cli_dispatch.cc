// The front of a multi-command tool: `tool <command> [options]` (see cli.h).
#include <cstdio>
#include <string>

#include "anvil/rpc/cli.h"

namespace anvil::rpc::cli {
namespace {

void print_usage(const char* program, std::string_view about, std::span<const Subcommand> commands) {
  std::printf("usage: %s <command> [options]\n\n%.*s\n\ncommands:\n", program, static_cast<int>(about.size()),
              about.data());
  for (const Subcommand& c : commands) std::printf("  %-9s %s\n", c.name, c.summary);
  std::printf("\nRun '%s <command> --help' for the options of a command; --version prints the version.\n", program);
}

// "compile, run or inspect"
std::string command_list(std::span<const Subcommand> commands) {
  std::string out;
  for (size_t i = 0; i < commands.size(); ++i) {
    if (i) out += i + 1 == commands.size() ? " or " : ", ";
    out += commands[i].name;
  }
  return out;
}

}  // namespace

int dispatch(int argc, char** argv, std::string_view tool, std::string_view about,
             std::span<const Subcommand> commands) {
  std::string_view first = argc >= 2 ? argv[1] : "";
  if (argc < 2 || first == "--help" || first == "-h") {
    print_usage(argv[0], about, commands);
    return argc < 2 ? kUsageError : 0;
  }
  if (first == "--version") {
    std::printf("%.*s %.*s\n", static_cast<int>(tool.size()), tool.data(), static_cast<int>(version().size()),
                version().data());
    return 0;
  }
  for (const Subcommand& c : commands) {
    if (first != c.name) continue;
    // The subcommand sees itself as argv[0], as if run on its own.
    std::string program = std::string(argv[0]) + " " + c.name;
    argv[1] = program.data();
    return c.main(argc - 1, argv + 1);
  }
  std::fprintf(stderr, "%s: error: unknown command '%s' (expected %s; see --help)\n", argv[0], argv[1],
               command_list(commands).c_str());
  return kUsageError;
}

}  // namespace anvil::rpc::cli
