// Validation and disassembly through the SPIRV-Tools C API (see spirv_tools.h).
#include "anvil/codegen/spirv/spirv_tools.h"

#include <spirv-tools/libspirv.h>

#include <cstdlib>
#include <cstring>

#include "anvil/base/error.h"

namespace anvil::codegen::spirv {
namespace {

// Owns a context and a diagnostic for one call.
struct Tools {
  spv_context context = spvContextCreate(SPV_ENV_VULKAN_1_1);
  spv_diagnostic diagnostic = nullptr;
  ~Tools() {
    spvDiagnosticDestroy(diagnostic);
    spvContextDestroy(context);
  }
  std::string message() const {
    if (diagnostic == nullptr || diagnostic->error == nullptr) return "(no message)";
    std::string m = diagnostic->error;
    if (!diagnostic->isTextSource) m += " (word " + std::to_string(diagnostic->position.index) + ")";
    return m;
  }
};

}  // namespace

std::optional<std::string> spirv_validation_error(std::span<const uint32_t> words) {
  Tools t;
  spv_const_binary_t binary{words.data(), words.size()};
  if (spvValidate(t.context, &binary, &t.diagnostic) == SPV_SUCCESS) return std::nullopt;
  return t.message();
}

void validate_spirv(std::span<const uint32_t> words, std::string_view what) {
  if (auto err = spirv_validation_error(words))
    value_error("SPIR-V validation failed for kernel '", what, "': ", *err);
}

std::string disassemble_spirv(std::span<const uint32_t> words) {
  Tools t;
  spv_text text = nullptr;
  const uint32_t options = SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_INDENT;
  if (spvBinaryToText(t.context, words.data(), words.size(), options, &text, &t.diagnostic) != SPV_SUCCESS)
    value_error("SPIR-V disassembly failed: ", t.message());
  std::string out(text->str, text->length);
  spvTextDestroy(text);
  return out;
}

bool spirv_validation_enabled() {
  const char* v = std::getenv("ANVIL_SPIRV_VALIDATE");
  if (v != nullptr && *v != '\0') return std::strcmp(v, "0") != 0;
#ifndef NDEBUG
  return true;
#else
  return false;
#endif
}

}  // namespace anvil::codegen::spirv
