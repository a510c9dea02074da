// pipeline::build's choice of code generator: functions grouped per target and each group built
// by its kind's row of codegen/codegen_registry.h; llvm and c as before; a device target with a
// host builds the functions marked for the host and names the device kind it cannot build yet.
#include "anvil/pipeline/build.h"

#include <gtest/gtest.h>

#include <vector>

#include "anvil/base/error.h"
#include "anvil/codegen/c/c_source_module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/te/schedule.h"

namespace anvil::pipeline {
namespace {

struct Scale {
  te::Tensor A, B;
  te::Schedule s;
};
Scale scale_kernel() {
  te::Tensor A = te::placeholder({16}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {16}, [&](ir::Var i) { return A(i) * 2.0f; }, "B");
  return {A, B, te::create_schedule({B})};
}

tir::PrimFunc scale_func(const std::string& name) {
  Scale k = scale_kernel();
  return pipeline::lower(k.s, {k.A, k.B}, name);
}

// Runs m[name] on 0..15 and checks B = 2 * A.
void expect_scales(const Module& m, const std::string& name) {
  Tensor a = Tensor::empty({16}, DataType::float32()), b = Tensor::empty({16}, DataType::float32());
  for (int i = 0; i < 16; ++i) static_cast<float*>(a.data())[i] = static_cast<float>(i) - 3.5f;
  m[name](a, b);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<float*>(b.data())[i], 2.0f * (static_cast<float>(i) - 3.5f));
}

ErrorKind error_kind(const std::function<void()>& f, std::string* message) {
  try {
    f();
  } catch (const Error& e) {
    *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "no error";
  return ErrorKind::kInternal;
}

TEST(BuildTargets, LlvmAndCGoThroughTheirGenerators) {
  Scale k = scale_kernel();
  Module llvm = build(k.s, {k.A, k.B}, Target::parse("llvm"), "scale");
  EXPECT_EQ(llvm.kind(), "llvm");
  expect_scales(llvm, "scale");
  Module c = build({scale_func("scale"), scale_func("twice")}, Target::parse("c"));
  EXPECT_EQ(c.kind(), "c");
  EXPECT_EQ(codegen::c_function_names_of(c), (std::vector<std::string>{"scale", "twice"}));
}

TEST(BuildTargets, DeviceTargetWithoutAGeneratorIsNotImplementedNamingTheKind) {
  std::string msg;
  Scale k = scale_kernel();
  EXPECT_EQ(error_kind([&] { build(k.s, {k.A, k.B}, Target::parse("opencl -host=llvm"), "scale"); }, &msg),
            ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("no code generator for target kind 'opencl' yet"), std::string::npos) << msg;
  EXPECT_EQ(error_kind([&] { build({scale_func("f")}, Target::parse("cuda -arch=sm_90")); }, &msg),
            ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("no code generator for target kind 'cuda' yet"), std::string::npos) << msg;
  EXPECT_NE(msg.find("functions: f"), std::string::npos) << msg;
}

TEST(BuildTargets, FunctionsMarkedForTheHostGoToTheHostsGenerator) {
  // A device build whose functions are all host code (target attribute = the host): the host's
  // generator builds them, here LLVM, and the module runs.
  Target vulkan = Target::parse("vulkan -host=llvm");
  tir::PrimFunc f = scale_func("host_scale").with_attr(std::string(kTargetAttr), ir::string_imm("llvm"));
  Module m = build({f}, vulkan);
  EXPECT_EQ(m.kind(), "llvm");
  expect_scales(m, "host_scale");
  // The default host of a device target is llvm too; a host of another kind gets its generator.
  EXPECT_EQ(build({f}, Target::parse("opencl")).kind(), "llvm");
  tir::PrimFunc g = scale_func("c_scale").with_attr(std::string(kTargetAttr), ir::string_imm("c"));
  EXPECT_EQ(build({g}, Target::parse("vulkan -host=c")).kind(), "c");
  // Host code next to device kernels: the host module imports the device module.
  Module mixed = build({f, scale_func("kernel")}, vulkan);
  EXPECT_EQ(mixed.kind(), "llvm");
  ASSERT_EQ(mixed.imports().size(), 1u);
  EXPECT_EQ(mixed.imports()[0].kind(), "vulkan");
  // A device kind with no generator is named, the host part is not the problem.
  std::string msg;
  EXPECT_EQ(error_kind([&] { build({f, scale_func("kernel")}, Target::parse("opencl -host=llvm")); }, &msg),
            ErrorKind::kNotImplemented);
  EXPECT_NE(msg.find("'opencl'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("functions: kernel"), std::string::npos) << msg;
  // A function for a host other than the build's host is a ValueError.
  EXPECT_EQ(error_kind([&] { build({g}, vulkan); }, &msg), ErrorKind::kValue);
  EXPECT_NE(msg.find("function 'c_scale' is for the host target 'c' but the build's host is 'llvm'"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace anvil::pipeline
