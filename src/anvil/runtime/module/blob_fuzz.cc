// libFuzzer target: arbitrary bytes into the module-blob loader. Every input must either load
// or throw anvil::Error; crashes, leaks and sanitizer reports are bugs.
#include <cstddef>
#include <cstdint>

#include "anvil/base/error.h"
#include "anvil/runtime/module/blob.h"
#include "anvil/runtime/register.h"

namespace {

class HostStub final : public anvil::ModuleNode {
 public:
  std::string kind() const override { return "host_stub"; }
  std::optional<anvil::Function> get_local_function(const std::string&) override { return std::nullopt; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  anvil::register_runtime_functions();
  anvil::Module host(anvil::make_object<HostStub>());
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    anvil::unpack_module_tree(bytes, host);
  } catch (const anvil::Error&) {
  }
  // The checksum stops most mutations early; also fuzz the payload parser behind it by
  // wrapping the input as a payload with a valid header.
  std::string wrapped(anvil::kBlobMagic, 8);
  auto put32 = [&](uint32_t v) { wrapped.append(reinterpret_cast<const char*>(&v), 4); };
  auto put64 = [&](uint64_t v) { wrapped.append(reinterpret_cast<const char*>(&v), 8); };
  put32(anvil::kBlobVersion);
  put32(0);
  put64(size);
  put32(anvil::crc32(bytes));
  put32(0);
  wrapped.append(bytes);
  try {
    anvil::unpack_module_tree(wrapped, host);
  } catch (const anvil::Error&) {
  }
  return 0;
}
