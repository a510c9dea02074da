// The code generator table: one row per target kind with a generator, found by target kind and
// by module kind; kinds without a row give the NotImplementedError that names them.
#include "anvil/codegen/codegen_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "anvil/base/error.h"
#include "anvil/te/schedule.h"
#include "anvil/pipeline/build.h"

namespace anvil::codegen {
namespace {

tir::PrimFunc scale_func() {
  te::Tensor A = te::placeholder({16}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {16}, [&](ir::Var i) { return A(i) * 2.0f; }, "B");
  return pipeline::lower(te::create_schedule({B}), {A, B}, "scale");
}

TEST(CodegenRegistry, LlvmAndCHaveRowsFoundByTargetAndModuleKind) {
  const CodegenEntry* llvm = find_codegen(TargetKind::kLLVM);
  const CodegenEntry* c = find_codegen(TargetKind::kC);
  ASSERT_NE(llvm, nullptr);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(llvm->module_kind, "llvm");
  EXPECT_EQ(c->module_kind, "c");
  EXPECT_EQ(find_codegen_for_module("llvm"), llvm);
  EXPECT_EQ(find_codegen_for_module("c"), c);
  EXPECT_EQ(find_codegen_for_module("params"), nullptr);
  // One row per kind, and each row's generator makes modules of the kind it declares.
  std::set<TargetKind> kinds;
  for (const CodegenEntry& e : codegen_entries()) {
    EXPECT_TRUE(kinds.insert(e.target_kind).second) << e.name;
    EXPECT_NE(e.build, nullptr) << e.name;
    Module m = e.build({scale_func()}, Target(e.target_kind));
    EXPECT_EQ(m.kind(), e.module_kind) << e.name;
    ASSERT_NE(e.source, nullptr) << e.name;
    EXPECT_NE(e.source(m, "").find("scale"), std::string::npos) << e.name;
  }
}

TEST(CodegenRegistry, DeviceKindsWithoutAGeneratorAreNotImplementedNamingTheKind) {
  for (TargetKind kind : {TargetKind::kCUDA, TargetKind::kOpenCL}) {
    EXPECT_EQ(find_codegen(kind), nullptr);
    Target t = Target(kind);
    try {
      build_for_target({scale_func()}, t);
      ADD_FAILURE() << "no error for " << t.str();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kNotImplemented) << e.what();
      std::string msg = e.what();
      EXPECT_NE(msg.find(str_cat("no code generator for target kind '", t.kind_name(), "' yet")), std::string::npos)
          << msg;
      EXPECT_NE(msg.find("functions: scale"), std::string::npos) << msg;
      EXPECT_NE(msg.find("kinds with one: 'llvm', 'c', 'vulkan'"), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace anvil::codegen
