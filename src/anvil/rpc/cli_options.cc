// Shared command-line conventions of anvil-rpc (see cli_options.h).
#include "anvil/rpc/cli_options.h"

#include <iostream>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"

#ifndef ANVIL_VERSION
#error "ANVIL_VERSION is defined by src/anvil/rpc/CMakeLists.txt from project(VERSION)"
#endif

namespace anvil::rpc::cli {
namespace {

std::string help_hint(const CLI::App& app) { return str_cat("Run '", app.get_name(), " --help' for the options.\n"); }

}  // namespace

std::string_view version() { return ANVIL_VERSION; }

void setup(CLI::App& app) {
  app.set_version_flag("--version", str_cat("anvil-rpc ", version()), "Print the version and exit");
  app.failure_message([](const CLI::App* a, const CLI::Error& e) {
    return str_cat(a->get_name(), ": error: ", e.what(), "\n", help_hint(*a));
  });
}

CLI::Option* add_port_option(CLI::App& app, const std::string& name, int& port, const std::string& help,
                             int min_port, int max_port) {
  CLI::Validator check(
      [min_port, max_port](std::string& text) { return port_problem(text, min_port, max_port); },
      str_cat(min_port, "..", max_port));
  return app.add_option(name, port, help)->check(check);
}

CLI::Validator host_port() {
  return CLI::Validator([](std::string& text) { return host_port_problem(text); }, "HOST:PORT");
}

std::optional<int> parse(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e, std::cout, std::cerr);  // prints help, the version, or the error
    return code == 0 ? 0 : kUsageError;            // CLI11's own codes (105, 109, ...) mean usage errors
  }
  return std::nullopt;
}

int usage_error(const CLI::App& app, const std::string& message) {
  std::cerr << app.get_name() << ": error: " << message << "\n" << help_hint(app) << std::flush;
  return kUsageError;
}

}  // namespace anvil::rpc::cli
