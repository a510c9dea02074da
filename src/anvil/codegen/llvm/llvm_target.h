// From a Target of kind "llvm" to what LLVM needs: the resolved triple, CPU and feature string
// (host defaults filled in), and a TargetMachine.
//
// Resolution rules:
// - no -mtriple: the process's triple (llvm::sys::getProcessTriple).
// - no -mcpu, or -mcpu=native, with a triple of the host's architecture: the host CPU
//   (sys::getHostCPUName) and the host's feature list (sys::getHostCPUFeatures, as "+f,-g,...").
//   When LLVM 16 does not know the host CPU ("generic"/"unknown", e.g. AMD Zen 5 = family 26),
//   the scheduling model is "znver4" on AMD and "x86-64-v4"/"x86-64-v3" otherwise, still with the
//   host's feature list, so AVX-512 and friends are used exactly when the machine has them.
// - no -mcpu with a foreign triple: "generic" and no features; -mcpu=native with a foreign
//   triple is a ValueError.
// - -mattr items are appended after the base features (later entries win in LLVM).
// - -opt-level (default 3) selects both the IR pipeline and the code generator level.
// - floating-point contraction (fused multiply-add) is always allowed, as in TVM; -fast-math adds
//   the unsafe flags (no NaNs/Infs/signed zeros, reassociation).
#pragma once

#include <memory>
#include <string>

#include "anvil/target/target.h"

namespace llvm {
class TargetMachine;
}

namespace anvil::codegen {

struct LLVMTargetSpec {
  std::string triple;    // normalized
  std::string cpu;       // never empty
  std::string features;  // comma-separated "+f"/"-f", may be empty
  std::string abi;       // -mabi, usually empty
  int opt_level = 3;
  bool fast_math = false;
  int num_cores = 0;     // 0: not given (use the runtime pool's size)
  bool is_host = false;  // the triple's architecture and OS are the process's
};

// The machine this process runs on, as resolved once (see the rules above).
struct HostCpu {
  std::string triple;
  std::string cpu;            // the scheduling model used
  std::string detected_name;  // what LLVM's host detection said ("generic" for unknown CPUs)
  std::string features;       // sorted "+f"/"-f" list
};
const HostCpu& host_cpu();
// The scheduling model used for a CPU that LLVM's host detection named `detected` (the rules
// above; exposed so they can be tested on any machine).
std::string host_cpu_model(const std::string& detected, bool x86, bool amd, bool avx512f, bool avx2);

// Resolves a target of kind "llvm"; ValueError for other kinds, an unknown triple, an unknown
// CPU name, or -mcpu=native with a foreign triple.
LLVMTargetSpec resolve_llvm_target(const Target& target);

// "llvm -mtriple=<host> -mcpu=<host cpu> -mattr=<host features>": the host made explicit, e.g.
// for tuning records that must not change meaning from machine to machine.
Target host_llvm_target();

// A TargetMachine for the spec: PIC, default code model. ValueError if LLVM refuses the triple.
std::unique_ptr<llvm::TargetMachine> create_target_machine(const LLVMTargetSpec& spec);

// Features the spec enables that this machine lacks, comma-separated (e.g. "avx512f,avx512bw")
// for an AVX-512 target on an AVX2 host; empty when code for the spec can run here.
std::string missing_host_features(const LLVMTargetSpec& spec);

}  // namespace anvil::codegen
