// libFuzzer target: arbitrary text through the graph IR parser (pass tests and --dump-ir files
// are read with it). Whatever parses must print and parse back to the same text.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/graph/parser.h"
#include "anvil/graph/printer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  anvil::graph::PrintOptions all{-1, false};
  std::string printed;
  try {
    printed = anvil::graph::to_string(anvil::graph::parse_module(text), all);
  } catch (const anvil::Error&) {
    return 0;
  }
  // The printed form is the parser's normal form: reading it again changes nothing.
  if (anvil::graph::to_string(anvil::graph::parse_module(printed), all) != printed) __builtin_trap();
  return 0;
}
