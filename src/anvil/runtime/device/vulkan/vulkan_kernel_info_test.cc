// Launch metadata: LaunchExpr evaluation, the ANVK round trip, and corrupt or inconsistent
// blobs rejected with a ValueError (no device needed).
#include "anvil/runtime/device/vulkan/vulkan_kernel_info.h"

#include <gtest/gtest.h>

#include <random>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_module.h"
#include "anvil/runtime/device/vulkan/vulkan_test_util.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/test_util.h"

namespace anvil::vulkan {
namespace {

using testing::axpy_kernel;

int64_t op(LaunchOp o) { return static_cast<int64_t>(o); }

std::string error_of(const std::function<void()>& fn, ErrorKind kind = ErrorKind::kValue) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

TEST(LaunchExpr, EvaluatesCeilDivOfSlot) {
  LaunchExpr e{{op(LaunchOp::kSlot), 0, op(LaunchOp::kConst), 63, op(LaunchOp::kAdd), op(LaunchOp::kConst), 64,
                op(LaunchOp::kFloorDiv)}};
  std::vector<int64_t> slots{0};
  for (int64_t n : {0, 1, 63, 64, 65, 1000}) {
    slots[0] = n;
    EXPECT_EQ(e.eval(slots), (n + 63) / 64) << n;
  }
  EXPECT_EQ(LaunchExpr::constant(7).eval({}), 7);
}

TEST(LaunchExpr, FloorDivisionModuloMinMax) {
  auto bin = [](LaunchOp o, int64_t a, int64_t b) {
    return LaunchExpr{{op(LaunchOp::kConst), a, op(LaunchOp::kConst), b, op(o)}}.eval({});
  };
  EXPECT_EQ(bin(LaunchOp::kFloorDiv, -7, 2), -4);
  EXPECT_EQ(bin(LaunchOp::kFloorMod, -7, 2), 1);
  EXPECT_EQ(bin(LaunchOp::kFloorDiv, 7, -2), -4);
  EXPECT_EQ(bin(LaunchOp::kFloorMod, 7, -2), -1);
  EXPECT_EQ(bin(LaunchOp::kSub, 3, 5), -2);
  EXPECT_EQ(bin(LaunchOp::kMul, 6, 7), 42);
  EXPECT_EQ(bin(LaunchOp::kMin, 6, 7), 6);
  EXPECT_EQ(bin(LaunchOp::kMax, 6, 7), 7);
}

TEST(LaunchExpr, MalformedProgramsAreValueErrors) {
  EXPECT_NE(error_of([] {
              LaunchExpr{{op(LaunchOp::kConst), 1, op(LaunchOp::kConst), 0, op(LaunchOp::kFloorDiv)}}.eval({});
            }).find("division by zero"),
            std::string::npos);
  error_of([] { LaunchExpr{{op(LaunchOp::kConst)}}.eval({}); });
  error_of([] { LaunchExpr{{op(LaunchOp::kAdd)}}.eval({}); });
  error_of([] { LaunchExpr{{}}.eval({}); });
  error_of([] { LaunchExpr{{99}}.eval({}); });
  error_of([] { LaunchExpr{{op(LaunchOp::kSlot), 3}}.eval(std::vector<int64_t>{1}); });
  error_of([] {
    LaunchExpr{{op(LaunchOp::kConst), int64_t{1} << 62, op(LaunchOp::kConst), 8, op(LaunchOp::kMul)}}.eval({});
  });
}

TEST(KernelInfoFormat, RoundTripsEveryField) {
  KernelInfo a = axpy_kernel(false, "first");
  KernelInfo b = axpy_kernel(true, "second");
  b.shared_memory_bytes = 1024;
  b.workgroup_size = {64, 1, 1};
  std::string bytes = serialize_kernels({a, b});
  EXPECT_EQ(bytes.substr(0, 4), "ANVK");
  std::vector<KernelInfo> back = parse_kernels(bytes);
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].name, "first");
  EXPECT_EQ(back[1].name, "second");
  EXPECT_EQ(back[0].entry_point, "axpy_main");
  EXPECT_EQ(back[0].spirv, a.spirv);
  EXPECT_FALSE(back[0].block_in_uniform);
  EXPECT_TRUE(back[1].block_in_uniform);
  EXPECT_EQ(back[1].shared_memory_bytes, 1024u);
  ASSERT_EQ(back[0].args.size(), 4u);
  EXPECT_EQ(back[0].args[2].name, "c");
  EXPECT_EQ(back[0].args[2].binding, 2);
  EXPECT_EQ(back[0].args[2].shape_slot, std::vector<int32_t>{1});
  EXPECT_EQ(back[0].args[3].slot, 0);
  EXPECT_EQ(back[0].slots[1].offset, 4u);
  EXPECT_EQ(back[0].grid[0].code, a.grid[0].code);
  EXPECT_EQ(back[0].num_tensors(), 3);
  EXPECT_EQ(serialize_kernels(back), bytes);
  EXPECT_EQ(parse_kernels(serialize_kernels({})).size(), 0u);
}

TEST(KernelInfoFormat, RejectsBadMagicVersionTruncationAndTrailingBytes) {
  std::string bytes = serialize_kernels({axpy_kernel(false)});
  std::string bad = bytes;
  bad[0] = 'X';
  EXPECT_NE(error_of([&] { parse_kernels(bad); }).find("magic"), std::string::npos);
  bad = bytes;
  bad[4] = 9;
  EXPECT_NE(error_of([&] { parse_kernels(bad); }).find("version"), std::string::npos);
  for (size_t n = 0; n < bytes.size(); ++n) error_of([&] { parse_kernels(std::string_view(bytes).substr(0, n)); });
  EXPECT_NE(error_of([&] { parse_kernels(bytes + "x"); }).find("trailing"), std::string::npos);
}

TEST(KernelInfoFormat, RejectsInconsistentKernels) {
  auto expect_reject = [](const std::function<void(KernelInfo&)>& edit, const std::string& needle) {
    KernelInfo k = axpy_kernel(false);
    edit(k);
    std::string msg = error_of([&] { serialize_kernels({k}); });
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    msg = error_of([&] { make_vulkan_module({k}); });
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
  };
  expect_reject([](KernelInfo& k) { k.args[1].binding = 5; }, "binding");
  expect_reject([](KernelInfo& k) { k.slots[1].offset = 8; }, "overflows");
  expect_reject([](KernelInfo& k) { k.slots[1].offset = 2; }, "aligned");
  expect_reject([](KernelInfo& k) { k.args[0].shape_slot = {7}; }, "slot 7");
  expect_reject([](KernelInfo& k) { k.args[3].slot = 1; }, "slot 1");
  expect_reject([](KernelInfo& k) { k.spirv.resize(3); }, "SPIR-V");
  expect_reject([](KernelInfo& k) { k.spirv[0] = 1; }, "magic");
  expect_reject([](KernelInfo& k) { k.grid[0].code = {op(LaunchOp::kAdd)}; }, "grid[0]");
  expect_reject([](KernelInfo& k) { k.grid[1].code = {op(LaunchOp::kSlot), 0}; }, "not an integer slot");
  expect_reject([](KernelInfo& k) { k.workgroup_size[2] = 0; }, "workgroup_size");
  expect_reject([](KernelInfo& k) { k.entry_point.clear(); }, "entry point");
}

TEST(KernelInfoFormat, CorruptBytesParseOrThrowValueError) {
  std::string bytes = serialize_kernels({axpy_kernel(false), axpy_kernel(true, "u")});
  std::mt19937& rng = anvil::testing::rng();
  std::uniform_int_distribution<size_t> pos(0, bytes.size() - 1);
  std::uniform_int_distribution<int> val(0, 255);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = bytes;
    for (int k = 0; k < 3; ++k) bad[pos(rng)] = static_cast<char>(val(rng));
    try {
      std::vector<KernelInfo> back = parse_kernels(bad);
      EXPECT_EQ(serialize_kernels(back), bad);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    }
  }
}

TEST(VulkanModule, SavesAndLoadsThroughTheRegisteredLoader) {
  register_runtime_functions();
  Module m = make_vulkan_module({axpy_kernel(false), axpy_kernel(true, "axpy_u")});
  EXPECT_EQ(m.kind(), "vulkan");
  EXPECT_TRUE(m.node()->is_binary_serializable());
  Module back = Module::load_from_bytes("vulkan", m.node()->save_to_bytes());
  ASSERT_EQ(vulkan_module_kernels(back).size(), 2u);
  EXPECT_EQ(vulkan_module_kernels(back)[1].name, "axpy_u");
  EXPECT_TRUE(back.find_function("axpy_u").has_value());
  EXPECT_FALSE(back.find_function("nope").has_value());
  error_of([&] { Module::load_from_bytes("vulkan", "ANVK"); });
  EXPECT_NE(error_of([] {
              make_vulkan_module({axpy_kernel(false), axpy_kernel(true)});
            }).find("two kernels"),
            std::string::npos);
  EXPECT_NE(error_of([] { vulkan_module_kernels(Module()); }).find("undefined"), std::string::npos);
}

}  // namespace
}  // namespace anvil::vulkan
