// Target: parsing TVM-style strings, canonical printing (round trip), equality and hashing, host
// targets, and the messages for bad input.
#include "anvil/target/target.h"

#include <gtest/gtest.h>

#include <unordered_set>

#include "anvil/base/error.h"

namespace anvil {
namespace {

std::string parse_error(std::string_view text) {
  try {
    Target::parse(text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error for '" << text << "'";
  return "";
}

TEST(TargetTest, ParsesLLVMOptionsWithTheirTypes) {
  Target t = Target::parse("llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4 -mattr=+avx2,+fma -num-cores=4 -fast-math");
  EXPECT_EQ(t.kind(), TargetKind::kLLVM);
  EXPECT_EQ(t.kind_name(), "llvm");
  EXPECT_EQ(t.get_string("mtriple"), "x86_64-pc-linux-gnu");
  EXPECT_EQ(t.get_string("mcpu"), "znver4");
  EXPECT_EQ(t.get_list("mattr"), (std::vector<std::string>{"+avx2", "+fma"}));
  EXPECT_EQ(t.get_int("num-cores"), 4);
  EXPECT_EQ(t.get_bool("fast-math"), true);
  EXPECT_FALSE(t.has("opt-level"));
  EXPECT_EQ(t.get_int("opt-level"), std::nullopt);
}

TEST(TargetTest, PrintsCanonicallyAndRoundTrips) {
  Target t = Target::parse("  llvm   -fast-math -num-cores=2 -mcpu=native -opt-level=2 ");
  EXPECT_EQ(t.str(), "llvm -mcpu=native -num-cores=2 -opt-level=2 -fast-math");
  EXPECT_EQ(Target::parse(t.str()), t);
  Target off = Target::parse("llvm -fast-math=false");
  EXPECT_EQ(off.get_bool("fast-math"), false);
  EXPECT_EQ(Target::parse(off.str()), off);
  EXPECT_NE(off, Target::parse("llvm"));
  for (const char* text : {"c", "llvm", "vulkan -from_device=0 -max_push_constants_size=128 -supports_float16",
                           "cuda -arch=sm_90 -max_num_threads=1024", "opencl -device=pocl", "c -mcpu=cortex-a72"}) {
    Target a = Target::parse(text);
    EXPECT_EQ(a.str(), text);
    EXPECT_EQ(Target::parse(a.str()), a);
  }
}

TEST(TargetTest, EqualTargetsHashEqualAndOptionOrderDoesNotMatter) {
  Target a = Target::parse("llvm -mcpu=znver4 -num-cores=8");
  Target b = Target::parse("llvm -num-cores=8 -mcpu=znver4");
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.hash(), b.hash());
  EXPECT_EQ(std::hash<Target>()(a), a.hash());
  std::unordered_set<Target> set{a, b, Target::parse("llvm"), Target::parse("c")};
  EXPECT_EQ(set.size(), 3u);
  // mattr order is meaningful (later entries win in LLVM), so it is kept.
  EXPECT_NE(Target::parse("llvm -mattr=+avx2,-avx2"), Target::parse("llvm -mattr=-avx2,+avx2"));
}

TEST(TargetTest, WithAndWithoutMakeValidatedCopies) {
  Target t = Target::parse("llvm -mcpu=native");
  Target u = t.with("mcpu", std::string("znver4")).with("opt-level", int64_t{1});
  EXPECT_EQ(u.str(), "llvm -mcpu=znver4 -opt-level=1");
  EXPECT_EQ(t.str(), "llvm -mcpu=native");  // unchanged
  EXPECT_EQ(u.without("mcpu").str(), "llvm -opt-level=1");
  EXPECT_THROW(t.with("opt-level", int64_t{7}), Error);
  EXPECT_THROW(t.with("bogus", true), Error);
  EXPECT_THROW(t.with("mcpu", int64_t{3}), Error);
}

TEST(TargetTest, BadInputGivesMessagesNamingTheProblem) {
  EXPECT_NE(parse_error("").find("empty target string"), std::string::npos);
  EXPECT_NE(parse_error("tpu").find("unknown target kind 'tpu'"), std::string::npos);
  std::string msg = parse_error("llvm -mcpu=znver4 -foo=1");
  EXPECT_NE(msg.find("unknown option '-foo'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("-mtriple"), std::string::npos) << msg;  // lists the known keys
  EXPECT_NE(parse_error("llvm -num-cores=x").find("'-num-cores' expects an integer, got 'x'"), std::string::npos);
  EXPECT_NE(parse_error("llvm -num-cores=0").find("must be positive"), std::string::npos);
  EXPECT_NE(parse_error("llvm -num-cores").find("needs a value"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mcpu").find("needs a value"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mcpu=").find("empty value"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mattr=avx2").find("must start with '+' or '-'"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mattr=+avx2,,+fma").find("malformed item"), std::string::npos);
  EXPECT_NE(parse_error("llvm -opt-level=4").find("0, 1, 2 or 3"), std::string::npos);
  EXPECT_NE(parse_error("llvm -fast-math=maybe").find("true/false"), std::string::npos);
  EXPECT_NE(parse_error("llvm -mcpu=a -mcpu=b").find("given twice"), std::string::npos);
  EXPECT_NE(parse_error("llvm mcpu=a").find("-key=value"), std::string::npos);
  EXPECT_NE(parse_error("llvm --mcpu=a").find("-key=value"), std::string::npos);
  // Options are validated per kind: -arch is CUDA's, not Vulkan's.
  EXPECT_NE(parse_error("vulkan -arch=sm_90").find("for target kind 'vulkan'"), std::string::npos);
}

TEST(TargetTest, DeviceTargetsTakeAHostThatIsPrintedHashedAndCompared) {
  Target v = Target::parse("vulkan -from_device=0 -host=llvm -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(v.kind(), TargetKind::kVulkan);
  EXPECT_EQ(v.get_int("from_device"), 0);
  ASSERT_TRUE(v.has_host());
  EXPECT_EQ(v.host(), Target::parse("llvm -mcpu=znver4 -num-cores=2"));
  EXPECT_EQ(v.str(), "vulkan -from_device=0 -host=llvm -mcpu=znver4 -num-cores=2");
  EXPECT_EQ(Target::parse(v.str()), v);
  // The same through with_host, and options set later keep the host.
  Target w = Target::parse("vulkan").with_host(Target::parse("llvm -num-cores=2 -mcpu=znver4")).with("from_device", int64_t{0});
  EXPECT_EQ(w, v);
  EXPECT_EQ(w.hash(), v.hash());
  // The host is part of identity; a host that was not written is not printed, but is "llvm".
  Target bare = Target::parse("vulkan");
  EXPECT_FALSE(bare.has_host());
  EXPECT_EQ(bare.host(), Target::parse("llvm"));
  EXPECT_NE(bare, Target::parse("vulkan -host=llvm"));
  EXPECT_NE(Target::parse("vulkan -host=llvm").hash(), Target::parse("vulkan -host=c").hash());
  EXPECT_EQ(Target::parse("vulkan -host=c").host(), Target::parse("c"));
  EXPECT_EQ(v.without_host(), Target::parse("vulkan -from_device=0"));
  std::unordered_set<Target> set{bare, Target::parse("vulkan -host=llvm"), Target::parse("vulkan  -host=llvm ")};
  EXPECT_EQ(set.size(), 2u);
  for (const char* text : {"cuda -arch=sm_90 -host=llvm -mtriple=aarch64-linux-gnu", "opencl -host=c -num-cores=4"}) {
    EXPECT_EQ(Target::parse(text).str(), text);
    EXPECT_TRUE(Target::parse(text).has_host());
  }
}

TEST(TargetTest, HostKindsAreTheirOwnHost) {
  Target llvm = Target::parse("llvm -mcpu=znver4");
  EXPECT_TRUE(llvm.is_host_kind());
  EXPECT_TRUE(Target::is_host_kind(TargetKind::kC));
  EXPECT_FALSE(Target::is_host_kind(TargetKind::kVulkan));
  EXPECT_EQ(llvm.host(), llvm);
  EXPECT_FALSE(llvm.has_host());
  EXPECT_EQ(llvm.with_host(llvm), llvm);  // TVM accepts Target("llvm", host="llvm")
  EXPECT_EQ(Target::parse("c -host=c"), Target::parse("c"));
  EXPECT_NE(parse_error("llvm -host=c").find("is its own host"), std::string::npos);
  EXPECT_THROW(llvm.with_host(Target::parse("llvm")), Error);  // a different llvm target
}

TEST(TargetTest, BadHostsGiveMessagesNamingTheProblem) {
  std::string msg = parse_error("vulkan -host=cuda");
  EXPECT_NE(msg.find("must be of a host kind ('llvm', 'c'), not 'cuda'"), std::string::npos) << msg;
  EXPECT_NE(parse_error("vulkan -host=").find("'-host' needs a target"), std::string::npos);
  EXPECT_NE(parse_error("vulkan -host").find("'-host' needs a target"), std::string::npos);
  msg = parse_error("vulkan -host=llvm -arch=sm_90");
  EXPECT_NE(msg.find("its host"), std::string::npos) << msg;
  EXPECT_NE(msg.find("unknown option '-arch' for target kind 'llvm'"), std::string::npos) << msg;
  EXPECT_NE(parse_error("vulkan -host=tpu").find("unknown target kind 'tpu'"), std::string::npos);
  EXPECT_THROW(Target::parse("vulkan").with_host(Target::parse("opencl")), Error);
}

TEST(TargetTest, TypedGetterMisuseIsAnInternalError) {
  Target t = Target::parse("llvm -mcpu=znver4");
  try {
    (void)t.get_int("mcpu");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
  EXPECT_THROW((void)t.get_string("arch"), Error);
}

}  // namespace
}  // namespace anvil
