// SpirvBuilder: header, encoding, deduplication, capabilities declared once, and a minimal
// compute module that the validator accepts.
#include "anvil/codegen/spirv/spirv_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "anvil/base/error.h"
#include "anvil/codegen/spirv/spirv_tools.h"

namespace anvil::codegen::spirv {
namespace {

std::vector<uint32_t> minimal_module(SpirvBuilder* b) {
  b->capability(spv::CapabilityShader);
  b->capability(spv::CapabilityShader);
  uint32_t v = b->type_void();
  uint32_t fn = b->begin_function(v, b->type_function(v, {}));
  b->emit(spv::OpReturn, {});
  b->end_function();
  b->entry_point(spv::ExecutionModelGLCompute, fn, "main", {});
  b->execution_mode(fn, spv::ExecutionModeLocalSize, {1, 1, 1});
  return b->finish();
}

TEST(SpirvBuilder, HeaderAndAValidMinimalModule) {
  SpirvBuilder b;
  std::vector<uint32_t> w = minimal_module(&b);
  ASSERT_GE(w.size(), 5u);
  EXPECT_EQ(w[0], spv::MagicNumber);
  EXPECT_EQ(w[1], 0x00010300u);  // SPIR-V 1.3
  EXPECT_EQ(w[4], 0u);
  EXPECT_FALSE(spirv_validation_error(w).has_value()) << *spirv_validation_error(w);
  std::string text = disassemble_spirv(w);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n') > 3, true);
  // Capability Shader once only.
  size_t first = text.find("OpCapability Shader");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(text.find("OpCapability Shader", first + 1), std::string::npos) << text;
  EXPECT_NE(text.find("OpEntryPoint GLCompute"), std::string::npos);
}

TEST(SpirvBuilder, TypesAndConstantsAreDeduplicated) {
  SpirvBuilder b;
  uint32_t i32 = b.type_int(32, true);
  EXPECT_EQ(b.type_int(32, true), i32);
  EXPECT_NE(b.type_int(32, false), i32);
  EXPECT_EQ(b.type_pointer(spv::StorageClassFunction, i32), b.type_pointer(spv::StorageClassFunction, i32));
  EXPECT_EQ(b.const_int(i32, 32, true, 7), b.const_int(i32, 32, true, 7));
  EXPECT_NE(b.const_int(i32, 32, true, 7), b.const_int(i32, 32, true, 8));
  uint32_t f32 = b.type_float(32);
  EXPECT_EQ(b.const_float(f32, 32, 1.5), b.const_float(f32, 32, 1.5));
  EXPECT_EQ(b.const_bool(true), b.const_bool(true));
  EXPECT_NE(b.const_bool(true), b.const_bool(false));
  // Structs are never merged: each carries its own decorations.
  EXPECT_NE(b.type_struct({i32}), b.type_struct({i32}));
}

TEST(SpirvBuilder, InvalidWordsFailValidationWithAMessage) {
  SpirvBuilder b;
  std::vector<uint32_t> w = minimal_module(&b);
  w.resize(w.size() - 2);  // cut into the function
  auto err = spirv_validation_error(w);
  ASSERT_TRUE(err.has_value());
  EXPECT_FALSE(err->empty());
  EXPECT_THROW(validate_spirv(w, "cut"), Error);
}

}  // namespace
}  // namespace anvil::codegen::spirv
