// TE kernels with GPU schedules through pipeline::lower and the SPIR-V code generator: the TIR
// passes leave thread-bound loops in a form the back end takes, modules validate, metadata
// matches the schedule; pipeline::build for "vulkan" reaches the back end.
#include <gtest/gtest.h>

#include <cstdlib>

#include "anvil/base/error.h"
#include "anvil/codegen/module_source.h"
#include "anvil/codegen/spirv/codegen_spirv.h"
#include "anvil/codegen/spirv/spirv_test_kernels.h"
#include "anvil/codegen/spirv/spirv_test_util.h"
#include "anvil/tir/workgroup_barrier.h"
#include "anvil/runtime/device/vulkan/vulkan_module.h"
#include "anvil/runtime/tensor.h"
#include "anvil/tir/interpreter.h"

namespace anvil::codegen::spirv {
namespace {

TEST(CodegenSpirvTe, AxpyWithSymbolicLength) {
  vulkan::KernelInfo k = testing::compile(testing::te_axpy());
  EXPECT_EQ(k.workgroup_size, (std::array<uint32_t, 3>{64, 1, 1}));
  ASSERT_EQ(k.args.size(), 4u);
  EXPECT_EQ(k.args[1].kind, vulkan::KernelArg::kScalar);
  EXPECT_EQ(k.args[3].binding, 2);
  // n comes from A's dimension; every tensor's dimension refers to it.
  int n_slot = k.args[0].shape_slot[0];
  ASSERT_GE(n_slot, 0);
  std::vector<int64_t> slots(k.slots.size(), 0);
  slots[n_slot] = 1000;
  EXPECT_EQ(k.grid[0].eval(slots), 16);
}

TEST(CodegenSpirvTe, MatmulWithTwoDimensionalBinding) {
  vulkan::KernelInfo k = testing::compile(testing::te_matmul(32, 24, 16));
  EXPECT_EQ(k.workgroup_size, (std::array<uint32_t, 3>{8, 8, 1}));
  EXPECT_EQ(k.grid[0].eval({}), 3);
  EXPECT_EQ(k.grid[1].eval({}), 4);
  EXPECT_TRUE(k.slots.empty());
}

TEST(CodegenSpirvTe, BuildForVulkanMakesAVulkanModuleWithSource) {
  // pipeline::build gives the host module (llvm) importing the device module (vulkan).
  setenv("ANVIL_SPIRV_VALIDATE", "1", 1);  // build_vulkan validates what it emits
  Module host = pipeline::build({testing::te_axpy("axpy_built"), testing::te_matmul(8, 8, 8, "mm_built")},
                                Target::parse(testing::full_target_text()));
  unsetenv("ANVIL_SPIRV_VALIDATE");
  const Module* dev = nullptr;
  if (host.kind() == "vulkan") dev = &host;
  for (const auto& m : host.imports())
    if (m.kind() == "vulkan") dev = &m;
  ASSERT_NE(dev, nullptr) << "no vulkan module in a build of kind " << host.kind();
  const auto& kernels = vulkan::vulkan_module_kernels(*dev);
  ASSERT_EQ(kernels.size(), 2u);  // one device module holds every kernel of the target
  EXPECT_EQ(kernels[0].name, "axpy_built");
  EXPECT_EQ(kernels[1].name, "mm_built");
  std::string text = module_source(*dev, "");
  EXPECT_NE(text.find("OpEntryPoint GLCompute"), std::string::npos) << text;
  EXPECT_NE(text.find("; kernel mm_built"), std::string::npos) << text;
  EXPECT_EQ(text, module_source(*dev, "spirv"));
  EXPECT_THROW(module_source(*dev, "ptx"), Error);
}

TEST(CodegenSpirvTe, NonDividingSplitsKeepTheirGuards) {
  vulkan::KernelInfo k = testing::compile(testing::te_matmul(30, 20, 16, "matmul_odd"));
  EXPECT_EQ(k.grid[0].eval({}), 3);
  EXPECT_EQ(k.grid[1].eval({}), 4);
  EXPECT_NE(testing::disassembly(k).find("OpSelectionMerge"), std::string::npos);  // the bounds guard
}

TEST(CodegenSpirvTe, UnrolledReductionAndSerialKernels) {
  te::Tensor A = te::placeholder({64, 8}, ir::DataType::float32(), "A");
  te::IterVar k = te::reduce_axis(0, 8, "k");
  te::Tensor B = te::compute({64}, [&](ir::Var i) { return te::sum(A(i, k), {k}); }, "B");
  te::Schedule s = te::create_schedule({B});
  s[B].bind(B.axis(0), "threadIdx.x");
  s[B].unroll(k);
  vulkan::KernelInfo info = testing::compile(pipeline::lower(s, {A, B}, "row_sum"));
  EXPECT_EQ(info.workgroup_size[0], 64u);
  // No thread binding at all: one invocation runs the whole loop nest.
  te::Schedule s2 = te::create_schedule({B});
  vulkan::KernelInfo serial = testing::compile(pipeline::lower(s2, {A, B}, "row_sum_serial"));
  EXPECT_EQ(serial.workgroup_size, (std::array<uint32_t, 3>{1, 1, 1}));
  EXPECT_EQ(serial.grid[0].eval({}), 1);
}

TEST(CodegenSpirvTe, VectorizedAxesAreNotImplementedNamingTheKernel) {
  te::Tensor A = te::placeholder({256}, ir::DataType::float32(), "A");
  te::Tensor B = te::compute({256}, [&](ir::Var i) { return A(i) * 2.0f; }, "B");
  te::Schedule s = te::create_schedule({B});
  auto [o, i] = s[B].split(B.axis(0), 4);
  s[B].bind(o, "threadIdx.x");
  s[B].vectorize(i);
  try {
    codegen_spirv(pipeline::lower(s, {A, B}, "vec_kernel"), testing::full_target());
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented);
    EXPECT_NE(std::string(e.what()).find("'vec_kernel'"), std::string::npos) << e.what();
  }
}

TEST(CodegenSpirvTe, CpuBackEndsRejectTheWorkgroupBarrier) {
  ir::Buffer A = ir::decl_buffer({4}, ir::DataType::float32(), "A");
  ir::Var i("i");
  tir::Stmt body = tir::make_for(i, 0, 4, tir::workgroup_barrier_after(tir::buffer_store(A, 1.0f, {i})));
  tir::PrimFunc f = tir::make_prim_func("with_barrier", {A}, body);
  for (const char* t : {"llvm", "c"}) {
    try {
      pipeline::build({f}, Target::parse(t));
      ADD_FAILURE() << "no error for " << t;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented) << e.what();
      EXPECT_NE(std::string(e.what()).find("workgroup barrier"), std::string::npos) << e.what();
    }
  }
  std::vector<float> data(4);
  Tensor t = Tensor::wrap(data.data(), std::vector<int64_t>{4}, ir::DataType::float32(), Device::cpu(), nullptr);
  try {
    tir::run_prim_func(f, {t.dl()});
    ADD_FAILURE() << "no error from the interpreter";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented) << e.what();
  }
}

}  // namespace
}  // namespace anvil::codegen::spirv
