// libFuzzer target: arbitrary bytes as an .npz file (anvil run --inputs reads users' files).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/tools/npz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    anvil::tools::parse_npz(bytes, "fuzz.npz");
  } catch (const anvil::Error&) {
  }
  try {
    anvil::tools::parse_npy(bytes, "fuzz.npy");
  } catch (const anvil::Error&) {
  }
  return 0;
}
