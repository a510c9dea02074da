// libFuzzer target: arbitrary bytes into the params (named tensors) loader. Every input must load
// or throw anvil::Error.
#include <cstddef>
#include <cstdint>

#include "anvil/base/error.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  anvil::register_runtime_functions();
  try {
    anvil::load_params(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const anvil::Error&) {
  }
  return 0;
}
