// float32 vector width of a CPU target (see vector_width.h).
#include "anvil/ops/cpu/vector_width.h"

#include <optional>
#include <string>
#include <vector>

namespace anvil::ops {
namespace {

bool has_feature(const std::vector<std::string>& list, const std::string& name, bool current) {
  for (const std::string& f : list) {  // later entries win, as in LLVM
    if (f == "+" + name) current = true;
    if (f == "-" + name) current = false;
  }
  return current;
}

}  // namespace

int vector_lanes_of(const Target& target) {
  std::optional<std::string> cpu = target.get_string("mcpu");
  std::optional<std::string> triple = target.get_string("mtriple");
  bool host = !triple && (!cpu || *cpu == "native");
  bool avx512 = false, avx2 = false;
#if defined(__x86_64__) || defined(__i386__)
  if (host) {
    avx512 = __builtin_cpu_supports("avx512f");
    avx2 = __builtin_cpu_supports("avx2");
  }
#endif
  if (cpu && *cpu != "native") {
    const std::string& c = *cpu;
    bool knows_512 = c.find("avx512") != std::string::npos || c == "x86-64-v4" || c == "znver4" ||
                     c == "skylake-avx512" || c == "cascadelake" || c == "cooperlake" || c == "icelake-server" ||
                     c == "icelake-client" || c == "tigerlake" || c == "sapphirerapids" || c == "cannonlake";
    avx512 = knows_512;
    avx2 = knows_512 || c == "x86-64-v3" || c == "haswell" || c == "broadwell" || c == "skylake" || c == "znver1" ||
           c == "znver2" || c == "znver3" || c == "alderlake";
  }
  if (auto mattr = target.get_list("mattr")) {
    avx512 = has_feature(*mattr, "avx512f", avx512);
    avx2 = has_feature(*mattr, "avx2", avx2) || avx512;
  }
  if (avx512) return 16;
  if (avx2) return 8;
  return 4;
}

}  // namespace anvil::ops
