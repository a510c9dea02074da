// libFuzzer target: arbitrary bytes into the ELF pre-check that runs before dlopen. Every input
// must either pass or throw anvil::Error; crashes, hangs and sanitizer reports are bugs. The
// seeds (libanvil_test_kernels and its stripped, RELR-packed twin, copied in by scripts/test.sh)
// are real small libraries, so mutations reach the dynamic table, hash tables, versions and
// relocations.
#include <cstddef>
#include <cstdint>

#include "anvil/base/error.h"
#include "anvil/runtime/module/elf_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    anvil::ElfLoadInfo info =
        anvil::check_elf_image(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
    // What passed must describe a consistent layout.
    for (const anvil::ElfLoadInfo::Range& r : info.segments) {
      if (r.end < r.begin) __builtin_trap();
      (void)info.contains(r.begin, r.end - r.begin, true);
    }
  } catch (const anvil::Error&) {
  }
  return 0;
}
