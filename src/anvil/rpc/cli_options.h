// The command-line conventions shared by `anvil-rpc` and its subcommands (server, tracker, proxy,
// query; CLI11): `--version`, ports checked to be numbers in range, `host:port` checked while
// parsing (before anything binds), and usage errors that say "<program>: error: ..." and exit
// with status 2.
#pragma once

#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <string_view>

#include "anvil/rpc/cli.h"  // kUsageError, version()

namespace anvil::rpc::cli {

// --version ("anvil-rpc 0.1.0") and the failure message of usage errors.
void setup(CLI::App& app);

// An integer port option: decimal digits, in [min_port, max_port] (--port-end takes 65536, an
// exclusive end); anything else is a usage error that names the option and the range.
CLI::Option* add_port_option(CLI::App& app, const std::string& name, int& port, const std::string& help,
                             int min_port = 0, int max_port = 65535);

// Checks an option's value is host:port (see address.h).
CLI::Validator host_port();

// Parses the command line. nullopt: go on. Otherwise the exit status: 0 after --help or
// --version (printed to stdout), kUsageError after a usage error (printed to stderr).
std::optional<int> parse(CLI::App& app, int argc, char** argv);

// Reports a usage error found after parsing ("<program>: error: <message>") and returns
// kUsageError.
int usage_error(const CLI::App& app, const std::string& message);

}  // namespace anvil::rpc::cli
