// Target resolution for LLVM: host defaults, explicit and foreign triples, TargetMachine options.
#include "anvil/codegen/llvm/llvm_target.h"

#include <gtest/gtest.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/Triple.h>

#include "anvil/base/error.h"

namespace anvil::codegen {
namespace {

TEST(LLVMTargetTest, PlainLLVMIsTheHost) {
  const HostCpu& host = host_cpu();
  EXPECT_EQ(host.triple, llvm::Triple::normalize(llvm::sys::getProcessTriple()));
  EXPECT_FALSE(host.cpu.empty());
  EXPECT_NE(host.cpu, "generic") << "detected '" << host.detected_name << "'";
  LLVMTargetSpec spec = resolve_llvm_target(Target::parse("llvm"));
  EXPECT_TRUE(spec.is_host);
  EXPECT_EQ(spec.triple, host.triple);
  EXPECT_EQ(spec.cpu, host.cpu);
  EXPECT_EQ(spec.features, host.features);
  EXPECT_EQ(spec.opt_level, 3);
  EXPECT_FALSE(spec.fast_math);
  // -mcpu=native is the same thing.
  LLVMTargetSpec native = resolve_llvm_target(Target::parse("llvm -mcpu=native"));
  EXPECT_EQ(native.cpu, spec.cpu);
  EXPECT_EQ(native.features, spec.features);
  std::printf("host: triple %s, cpu %s (LLVM detected '%s')\n", host.triple.c_str(), host.cpu.c_str(),
              host.detected_name.c_str());
}

TEST(LLVMTargetTest, UnknownHostCpusGetASchedulingModel) {
  // Zen 5 (AMD family 26) is "generic" to LLVM 16: schedule as Zen 4, features from the host.
  EXPECT_EQ(host_cpu_model("generic", /*x86=*/true, /*amd=*/true, true, true), "znver4");
  EXPECT_EQ(host_cpu_model("unknown", true, true, false, true), "znver4");
  EXPECT_EQ(host_cpu_model("", true, false, true, true), "x86-64-v4");
  EXPECT_EQ(host_cpu_model("generic", true, false, false, true), "x86-64-v3");
  EXPECT_EQ(host_cpu_model("generic", true, false, false, false), "x86-64");
  EXPECT_EQ(host_cpu_model("generic", false, false, false, false), "generic");
  EXPECT_EQ(host_cpu_model("sapphirerapids", true, false, true, true), "sapphirerapids");
  EXPECT_EQ(host_cpu_model("znver3", true, true, false, true), "znver3");
}

TEST(LLVMTargetTest, HostFeaturesFollowTheMachine) {
  const std::string& features = host_cpu().features;
#if defined(__x86_64__)
  bool avx512 = __builtin_cpu_supports("avx512f");
  EXPECT_NE(features.find(avx512 ? "+avx512f" : "-avx512f"), std::string::npos) << features;
  bool avx2 = __builtin_cpu_supports("avx2");
  EXPECT_NE(features.find(avx2 ? "+avx2" : "-avx2"), std::string::npos) << features;
#endif
  EXPECT_EQ(missing_host_features(resolve_llvm_target(Target::parse("llvm"))), "");
}

TEST(LLVMTargetTest, HostMadeExplicitResolvesTheSame) {
  Target explicit_host = host_llvm_target();
  EXPECT_EQ(Target::parse(explicit_host.str()), explicit_host);
  LLVMTargetSpec a = resolve_llvm_target(explicit_host);
  LLVMTargetSpec b = resolve_llvm_target(Target::parse("llvm"));
  EXPECT_EQ(a.triple, b.triple);
  EXPECT_EQ(a.cpu, b.cpu);
  EXPECT_EQ(a.features, b.features);
}

TEST(LLVMTargetTest, ExplicitOptionsAndForeignTriples) {
  LLVMTargetSpec arm = resolve_llvm_target(Target::parse("llvm -mtriple=aarch64-linux-gnu"));
  EXPECT_FALSE(arm.is_host);
  EXPECT_EQ(arm.triple, "aarch64-unknown-linux-gnu");
  EXPECT_EQ(arm.cpu, "generic");
  EXPECT_EQ(arm.features, "");
  LLVMTargetSpec a72 = resolve_llvm_target(Target::parse("llvm -mtriple=aarch64-linux-gnu -mcpu=cortex-a72 -mattr=+neon"));
  EXPECT_EQ(a72.cpu, "cortex-a72");
  EXPECT_EQ(a72.features, "+neon");
  LLVMTargetSpec x = resolve_llvm_target(
      Target::parse("llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -mattr=+avx2,+fma -opt-level=1 -fast-math -num-cores=3"));
  EXPECT_EQ(x.cpu, "znver4");
  EXPECT_EQ(x.features, "+avx2,+fma");
  EXPECT_EQ(x.opt_level, 1);
  EXPECT_TRUE(x.fast_math);
  EXPECT_EQ(x.num_cores, 3);
  // -mattr on the host appends to the host's features.
  LLVMTargetSpec h = resolve_llvm_target(Target::parse("llvm -mattr=-avx512f"));
  EXPECT_EQ(h.features, host_cpu().features + ",-avx512f");
}

TEST(LLVMTargetTest, BadTargetsAreValueErrors) {
  auto message = [](const char* text) -> std::string {
    try {
      resolve_llvm_target(Target::parse(text));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue);
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(message("llvm -mtriple=nosucharch-linux-gnu").find("cannot generate code"), std::string::npos);
  EXPECT_NE(message("llvm -mcpu=pentium9000").find("does not know CPU 'pentium9000'"), std::string::npos);
  EXPECT_NE(message("llvm -mtriple=aarch64-linux-gnu -mcpu=native").find("-mcpu=native"), std::string::npos);
  EXPECT_THROW(resolve_llvm_target(Target::parse("c")), Error);
}

TEST(LLVMTargetTest, TargetMachineCarriesTheOptions) {
  auto tm = create_target_machine(resolve_llvm_target(Target::parse("llvm -opt-level=2 -fast-math")));
  EXPECT_EQ(tm->getTargetCPU().str(), host_cpu().cpu);
  EXPECT_EQ(tm->getOptLevel(), llvm::CodeGenOpt::Default);
  EXPECT_TRUE(tm->Options.UnsafeFPMath);
  EXPECT_EQ(tm->Options.AllowFPOpFusion, llvm::FPOpFusion::Fast);
  EXPECT_TRUE(tm->isPositionIndependent());
  auto plain = create_target_machine(resolve_llvm_target(Target::parse("llvm")));
  EXPECT_EQ(plain->getOptLevel(), llvm::CodeGenOpt::Aggressive);
  EXPECT_FALSE(plain->Options.UnsafeFPMath);
  auto arm = create_target_machine(resolve_llvm_target(Target::parse("llvm -mtriple=aarch64-linux-gnu")));
  EXPECT_EQ(arm->getTargetTriple().getArch(), llvm::Triple::aarch64);
}

TEST(LLVMTargetTest, FeaturesTheHostLacksAreReported) {
  // Any feature the host reports as absent, switched on, must be named.
  std::string features = "," + host_cpu().features;
  size_t minus = features.find(",-");
  if (minus == std::string::npos) GTEST_SKIP() << "the host has every feature LLVM knows";
  size_t end = features.find(',', minus + 1);
  std::string name = features.substr(minus + 2, end == std::string::npos ? std::string::npos : end - minus - 2);
  LLVMTargetSpec spec = resolve_llvm_target(Target::parse("llvm -mattr=+" + name));
  EXPECT_NE(missing_host_features(spec).find(name), std::string::npos) << name;
}

}  // namespace
}  // namespace anvil::codegen
