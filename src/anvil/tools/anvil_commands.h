// Entry points of the `anvil` subcommands (anvil_main.cc dispatches): compile, run, inspect.
// Each parses its own flags with CLI11 through the conventions of rpc/cli_options.h (--help,
// --version, usage errors exit 2) and returns the exit status: 0, 1 for a failure of the work
// (the message names what failed), 2 for a usage error.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace anvil::tools {

int compile_main(int argc, char** argv);  // cli_compile.cc
int run_main(int argc, char** argv);      // cli_run.cc
int inspect_main(int argc, char** argv);  // cli_inspect.cc

// --input-shapes: "x:1x3x224x224,mask:1x128" or TVM's "x:[1,3,224,224] mask:[1,128]" (tvmc);
// -1 keeps the model's dimension. ValueError naming the bad entry.
std::map<std::string, std::vector<int64_t>> parse_input_shapes(const std::string& text);

}  // namespace anvil::tools
