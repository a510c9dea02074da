// Target resolution (host defaults) and TargetMachine creation.
#include "anvil/codegen/llvm/llvm_target.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Target/TargetOptions.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include <algorithm>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "anvil/base/error.h"
#include "anvil/codegen/llvm/llvm_init.h"

namespace anvil::codegen {
namespace {

bool is_amd_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return ebx == 0x68747541 && edx == 0x69746e65 && ecx == 0x444d4163;  // "AuthenticAMD"
#else
  return false;
#endif
}

HostCpu detect_host() {
  HostCpu host;
  host.triple = llvm::Triple::normalize(llvm::sys::getProcessTriple());
  host.detected_name = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> features;
  std::vector<std::string> list;
  if (llvm::sys::getHostCPUFeatures(features))
    for (const auto& f : features) list.push_back((f.getValue() ? "+" : "-") + f.getKey().str());
  std::sort(list.begin(), list.end(), [](const std::string& a, const std::string& b) {
    return a.substr(1) < b.substr(1);
  });
  for (const auto& f : list) host.features += (host.features.empty() ? "" : ",") + f;
  host.cpu = host_cpu_model(host.detected_name, llvm::Triple(host.triple).isX86(), is_amd_cpu(),
                           features.lookup("avx512f"), features.lookup("avx2"));
  return host;
}

const llvm::Target& lookup_target(const std::string& triple, const std::string& where) {
  initialize_llvm();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) value_error(where, "LLVM cannot generate code for triple '", triple, "': ", error);
  return *target;
}

bool same_machine(const llvm::Triple& a, const llvm::Triple& b) {
  return a.getArch() == b.getArch() && a.getOS() == b.getOS() && a.getObjectFormat() == b.getObjectFormat();
}

}  // namespace

std::string host_cpu_model(const std::string& detected, bool x86, bool amd, bool avx512f, bool avx2) {
  bool unknown = detected.empty() || detected == "generic" || detected == "unknown";
  if (!unknown) return detected;
  if (!x86) return "generic";
  // LLVM does not know this CPU (e.g. Zen 5 in LLVM 16). Pick a scheduling model; the ISA comes
  // from the feature list either way.
  if (amd) return "znver4";
  return avx512f ? "x86-64-v4" : avx2 ? "x86-64-v3" : "x86-64";
}

const HostCpu& host_cpu() {
  static const HostCpu host = detect_host();
  return host;
}

LLVMTargetSpec resolve_llvm_target(const Target& target) {
  std::string where = str_cat("target '", target.str(), "': ");
  if (target.kind() != TargetKind::kLLVM) value_error(where, "expected a target of kind 'llvm'");
  const HostCpu& host = host_cpu();
  LLVMTargetSpec spec;
  spec.triple = llvm::Triple::normalize(target.get_string("mtriple").value_or(host.triple));
  llvm::Triple triple(spec.triple);
  spec.is_host = same_machine(triple, llvm::Triple(host.triple));
  const llvm::Target& llvm_target = lookup_target(spec.triple, where);

  std::optional<std::string> cpu = target.get_string("mcpu");
  bool host_arch = triple.getArch() == llvm::Triple(host.triple).getArch();
  if (!cpu || *cpu == "native") {
    if (host_arch) {
      spec.cpu = host.cpu;
      spec.features = host.features;
    } else if (cpu) {
      value_error(where, "-mcpu=native means this machine (", host.triple, "), which cannot run '", spec.triple,
                  "' code; name the CPU instead");
    } else {
      spec.cpu = "generic";
    }
  } else {
    spec.cpu = *cpu;
    std::unique_ptr<llvm::MCSubtargetInfo> sti(llvm_target.createMCSubtargetInfo(spec.triple, "", ""));
    if (sti && !sti->isCPUStringValid(spec.cpu))
      value_error(where, "LLVM does not know CPU '", spec.cpu, "' for '", spec.triple, "'");
  }
  if (auto mattr = target.get_list("mattr"))
    for (const auto& f : *mattr) spec.features += (spec.features.empty() ? "" : ",") + f;
  spec.abi = target.get_string("mabi").value_or("");
  spec.opt_level = static_cast<int>(target.get_int("opt-level").value_or(3));
  spec.fast_math = target.get_bool("fast-math").value_or(false);
  spec.num_cores = static_cast<int>(target.get_int("num-cores").value_or(0));
  return spec;
}

Target host_llvm_target() {
  const HostCpu& host = host_cpu();
  Target t = Target(TargetKind::kLLVM).with("mtriple", host.triple).with("mcpu", host.cpu);
  if (host.features.empty()) return t;
  std::vector<std::string> features;
  size_t start = 0;
  while (start <= host.features.size()) {
    size_t comma = host.features.find(',', start);
    if (comma == std::string::npos) comma = host.features.size();
    features.push_back(host.features.substr(start, comma - start));
    start = comma + 1;
  }
  return t.with("mattr", features);
}

std::unique_ptr<llvm::TargetMachine> create_target_machine(const LLVMTargetSpec& spec) {
  const llvm::Target& target = lookup_target(spec.triple, "create_target_machine: ");
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  if (spec.fast_math) {
    options.UnsafeFPMath = true;
    options.NoInfsFPMath = true;
    options.NoNaNsFPMath = true;
    options.NoSignedZerosFPMath = true;
  }
  if (!spec.abi.empty()) options.MCOptions.ABIName = spec.abi;
  static constexpr llvm::CodeGenOpt::Level kLevels[] = {llvm::CodeGenOpt::None, llvm::CodeGenOpt::Less,
                                                        llvm::CodeGenOpt::Default, llvm::CodeGenOpt::Aggressive};
  llvm::TargetMachine* tm = target.createTargetMachine(spec.triple, spec.cpu, spec.features, options, llvm::Reloc::PIC_,
                                                       std::nullopt, kLevels[std::clamp(spec.opt_level, 0, 3)]);
  if (tm == nullptr)
    value_error("create_target_machine: LLVM refused triple '", spec.triple, "' with CPU '", spec.cpu, "'");
  return std::unique_ptr<llvm::TargetMachine>(tm);
}

std::string missing_host_features(const LLVMTargetSpec& spec) {
  if (!spec.is_host) return "";
  initialize_llvm();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(spec.triple, error);
  if (target == nullptr) return "";
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(spec.triple, spec.cpu, spec.features));
  if (!sti) return "";
  llvm::StringMap<bool> host;
  if (!llvm::sys::getHostCPUFeatures(host)) return "";
  std::vector<std::string> missing;
  for (const auto& f : host)
    if (!f.getValue() && sti->checkFeatures("+" + f.getKey().str())) missing.push_back(f.getKey().str());
  std::sort(missing.begin(), missing.end());
  std::string out;
  for (const auto& m : missing) out += (out.empty() ? "" : ",") + m;
  return out;
}

}  // namespace anvil::codegen
