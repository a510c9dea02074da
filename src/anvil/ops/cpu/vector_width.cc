// float32 vector width of a CPU target (see vector_width.h). What a CPU has comes from LLVM's
// own tables, the ones its code generator uses: X86TargetParser for named CPUs (with the features
// each implies), sys::getHostCPUFeatures for the host (as codegen/llvm/llvm_target.cc resolves
// "llvm"), and LLVM's implication rules for -mattr changes (-avx2 also clears avx512f).
// vector_width_test.cc checks the answer against the code generator's subtarget for every x86 CPU
// LLVM knows.
#include "anvil/ops/cpu/vector_width.h"

#include <llvm/ADT/SmallVector.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <optional>
#include <string>
#include <vector>

namespace anvil::ops {
namespace {

// Turns a feature on or off with everything LLVM says follows from it (on: the features it
// implies; off: the features that imply it), as clang and LLVM's subtarget do.
void set_feature(llvm::StringMap<bool>& features, llvm::StringRef name, bool on) {
  llvm::X86::updateImpliedFeatures(name, on, features);
  features[name] = on;
}

}  // namespace

int vector_lanes_of(const Target& target) {
  // The c target's source is built by `cc -O2` for the baseline ISA (SSE2 on x86-64: 4 floats),
  // and it has no -mcpu/-mtriple to read.
  if (target.kind() != TargetKind::kLLVM) return 4;
  std::optional<std::string> cpu = target.get_string("mcpu");
  std::optional<std::string> triple = target.get_string("mtriple");
  llvm::Triple host(llvm::sys::getProcessTriple());
  llvm::Triple arch = triple ? llvm::Triple(llvm::Triple::normalize(*triple)) : host;
  if (!arch.isX86()) return 4;
  llvm::StringMap<bool> features;
  if (cpu && *cpu != "native") {
    if (llvm::X86::parseArchX86(*cpu) != llvm::X86::CK_None) {
      llvm::SmallVector<llvm::StringRef, 64> list;
      llvm::X86::getFeaturesForCPU(*cpu, list);  // the CPU's own list, without what it implies
      for (llvm::StringRef f : list) set_feature(features, f, true);
    }
  } else if (arch.getArch() == host.getArch()) {
    // The host, as codegen/llvm/llvm_target.cc resolves -mcpu absent or native on the host's
    // architecture (-mcpu=native with another architecture is its error; 4 lanes here).
    llvm::sys::getHostCPUFeatures(features);
  }
  if (auto mattr = target.get_list("mattr")) {
    for (const std::string& item : *mattr) {  // "+f" / "-f" (target.cc checks the sign); later wins
      if (item.size() >= 2) set_feature(features, llvm::StringRef(item).drop_front(), item[0] == '+');
    }
  }
  if (features.lookup("avx512f")) return 16;
  if (features.lookup("avx2")) return 8;
  return 4;
}

}  // namespace anvil::ops
