// vector_lanes_of against LLVM's code generator: for every 64-bit x86 CPU LLVM knows, for -mattr
// changes in both directions and for the host, the width the schedules pick is the widest vector
// the code generator's subtarget enables (avx512f: 16 float32 lanes, avx2: 8, else 4). The
// schedules and the code generator must never disagree on what a CPU has.
#include "anvil/ops/cpu/vector_width.h"

#include <gtest/gtest.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/X86TargetParser.h>

#include <cstdio>
#include <string>

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/llvm_target.h"

namespace anvil::ops {
namespace {

// The lanes the LLVM code generator would use for `target`.
int codegen_lanes(const Target& target) {
  auto tm = codegen::create_target_machine(codegen::resolve_llvm_target(target));
  const llvm::MCSubtargetInfo* sti = tm->getMCSubtargetInfo();
  if (sti->checkFeatures("+avx512f")) return 16;
  if (sti->checkFeatures("+avx2")) return 8;
  return 4;
}

TEST(VectorWidth, EveryX86CpuAgreesWithTheCodeGenerator) {
  llvm::SmallVector<llvm::StringRef, 128> cpus;
  llvm::X86::fillValidCPUArchList(cpus, /*Only64Bit=*/true);
  int checked = 0, wide = 0;
  for (llvm::StringRef cpu : cpus) {
    Target t = Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=" + cpu.str());
    int want = 0;
    try {
      want = codegen_lanes(t);
    } catch (const Error& e) {  // a parser name the back end does not take: nothing to agree with
      std::printf("skipped %s: %s\n", cpu.str().c_str(), e.what());
      continue;
    }
    EXPECT_EQ(vector_lanes_of(t), want) << "-mcpu=" << cpu.str();
    ++checked;
    wide += want == 16;
  }
  std::printf("%d x86-64 CPUs checked, %d with AVX-512F\n", checked, wide);
  EXPECT_GT(checked, 40);
  EXPECT_GT(wide, 10);
}

TEST(VectorWidth, MattrChangesFollowLLVMsImplications) {
  for (const char* text : {"llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64 -mattr=+avx512f",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4 -mattr=-avx512f",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4 -mattr=-avx2",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=haswell -mattr=-avx2,+avx2",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512 -mattr=-avx512f,+avx512f",
                           "llvm -mtriple=x86_64-linux-gnu -mcpu=znver3 -mattr=-avx",
                           "llvm -mtriple=x86_64-linux-gnu"}) {
    Target t = Target::parse(text);
    EXPECT_EQ(vector_lanes_of(t), codegen_lanes(t)) << text;
  }
  EXPECT_EQ(vector_lanes_of(Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64-v4 -mattr=-avx2")), 4);
}

TEST(VectorWidth, HostAndForeignArchitectures) {
  for (const char* text : {"llvm", "llvm -mcpu=native", "llvm -mattr=-avx512f"}) {
    Target t = Target::parse(text);
    EXPECT_EQ(vector_lanes_of(t), codegen_lanes(t)) << text;
  }
  EXPECT_EQ(vector_lanes_of(Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72")), 4);
}

}  // namespace
}  // namespace anvil::ops
