// SPIRV-Tools behind two calls: validation of a module for the Vulkan 1.1 environment and
// disassembly to the usual text form. SPIRV-Tools is linked statically into anvil_compiler
// (Debian's libSPIRV-Tools.a is position-independent).
//
// The SPIR-V code generator validates every module it emits when spirv_validation_enabled():
// the environment variable ANVIL_SPIRV_VALIDATE decides when set ("0": no, anything else: yes),
// otherwise debug builds validate and release builds do not. Tests validate always.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace anvil::codegen::spirv {

// The validator's message when `words` is not a valid Vulkan 1.1 module, nullopt when it is.
std::optional<std::string> spirv_validation_error(std::span<const uint32_t> words);
// ValueError "SPIR-V validation failed for kernel '<what>': <message>" when invalid.
void validate_spirv(std::span<const uint32_t> words, std::string_view what);
// The module as SPIR-V assembly text (friendly names); ValueError when it cannot be decoded.
std::string disassemble_spirv(std::span<const uint32_t> words);
// ANVIL_SPIRV_VALIDATE when set and non-empty ("0" = off), else true in debug builds only.
bool spirv_validation_enabled();

}  // namespace anvil::codegen::spirv
