// libFuzzer target: arbitrary bytes into the ONNX importer (load, check, convert every node).
// Each input must import or fail with an anvil::Error naming what is wrong; an InternalError (a
// broken invariant of Anvil, never the file's fault) or any other exception is a finding. No
// directory is given, so external data is refused before any file is opened. The seeds
// (tests/fuzz_seeds/fuzz_onnx_import) are small models of common operators.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/frontend/onnx/importer.h"
#include "anvil/graph/printer.h"

namespace onnx_fe = anvil::frontend::onnx;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    anvil::graph::IRModule mod =
        onnx_fe::from_onnx_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
    (void)anvil::graph::to_string(mod);
  } catch (const anvil::Error& e) {
    if (e.kind() == anvil::ErrorKind::kInternal) throw;
  }
  return 0;
}
