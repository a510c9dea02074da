// libFuzzer target: arbitrary bytes into the VM executable loader (docs/vm-format.md). Every input
// must load or throw anvil::Error; crashes, leaks and sanitizer reports are bugs. An input that
// loads must print, and must re-save to bytes that load back to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "anvil/base/error.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/vm/executable.h"

namespace {

constexpr char kMagic[8] = {'A', 'N', 'V', 'L', 'V', 'M', 'E', 'X'};
constexpr uint32_t kVersion = 1;

void try_load(std::string_view bytes) {
  anvil::vm::Executable exe;
  try {
    exe = anvil::vm::Executable::load_from_bytes(bytes);
  } catch (const anvil::Error&) {
    return;
  }
  // A loaded executable passed verify_executable: printing walks all of its code and constants.
  std::string text = exe->as_text();
  std::string saved = exe->save_to_bytes();
  anvil::vm::Executable again = anvil::vm::Executable::load_from_bytes(saved);
  if (again->save_to_bytes() != saved || again->as_text() != text) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  anvil::register_runtime_functions();
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try_load(bytes);
  // The checksum stops almost every mutation at the header; also wrap the input as the payload
  // behind a valid header so the fuzzer reaches the section table and the section parsers.
  std::string wrapped(kMagic, 8);
  auto put32 = [&](uint32_t v) { wrapped.append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [&](uint64_t v) { wrapped.append(reinterpret_cast<const char*>(&v), 8); };
  put32(kVersion);
  put32(0);
  put64(size);
  put32(anvil::crc32(bytes));
  put32(0);
  wrapped.append(bytes);
  try_load(wrapped);
  return 0;
}
