// The source text of built modules through codegen::module_source and the global function
// "runtime.ModuleGetSource" (the name TVM's Module.get_source calls).
#include "anvil/codegen/module_source.h"

#include <gtest/gtest.h>

#include "anvil/base/error.h"
#include "anvil/codegen/c/c_source_module.h"
#include "anvil/codegen/llvm/llvm_module.h"
#include "anvil/pipeline/build.h"
#include "anvil/runtime/module/params_module.h"
#include "anvil/runtime/registry.h"
#include "anvil/te/schedule.h"

namespace anvil::codegen {
namespace {

Module build_scale(const std::string& target) {
  te::Tensor A = te::placeholder({16}, DataType::float32(), "A");
  te::Tensor B = te::compute(
      {16}, [&](ir::Var i) { return A(i) * 2.0f; }, "B");
  return pipeline::build(te::create_schedule({B}), {A, B}, Target::parse(target), "scale");
}

TEST(ModuleSource, GlobalFunctionGivesTheSourceOfLlvmAndCModules) {
  register_codegen_functions();
  register_codegen_functions();  // idempotent
  Function get_source = Registry::get("runtime.ModuleGetSource");
  Module llvm = build_scale("llvm");
  std::string ll = get_source(llvm, "").as_string();
  EXPECT_EQ(ll, llvm_module_source(llvm, "ll"));
  EXPECT_NE(ll.find("define"), std::string::npos);
  EXPECT_EQ(get_source(llvm, "asm").as_string(), llvm_module_source(llvm, "asm"));
  Module c = build_scale("c");
  EXPECT_EQ(get_source(c, "").as_string(), c_source_of(c));
  EXPECT_EQ(get_source(c, "c").as_string(), c_source_of(c));
  EXPECT_EQ(module_source(c, ""), c_source_of(c));
}

TEST(ModuleSource, UnknownFormatsAndKindsWithoutSourceAreValueErrors) {
  register_codegen_functions();
  Function get_source = Registry::get("runtime.ModuleGetSource");
  auto kind_of = [&](const Module& m, const std::string& fmt) {
    try {
      get_source(m, fmt);
    } catch (const Error& e) {
      return e.kind();
    }
    ADD_FAILURE() << "no error for format '" << fmt << "'";
    return ErrorKind::kInternal;
  };
  EXPECT_EQ(kind_of(build_scale("llvm"), "ptx"), ErrorKind::kValue);
  EXPECT_EQ(kind_of(build_scale("c"), "ll"), ErrorKind::kValue);
  EXPECT_EQ(kind_of(make_params_module({}), ""), ErrorKind::kValue);
  EXPECT_THROW(get_source(build_scale("c")), Error);  // one argument
}

}  // namespace
}  // namespace anvil::codegen
