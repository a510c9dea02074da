// Writes a kernel's SPIR-V (and its disassembly through SPIRV-Tools) for debugging.
#include <cctype>
#include <filesystem>
#include <fstream>

#include "anvil/base/error.h"
#include "anvil/runtime/device/vulkan/vulkan_pipeline.h"

#ifdef ANVIL_HAVE_SPIRV_TOOLS
#include <spirv-tools/libspirv.h>
#endif

namespace anvil::vulkan {
namespace {

void write_file(const std::filesystem::path& path, const char* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data, static_cast<std::streamsize>(size));
  if (!out) io_error("vulkan: cannot write shader dump ", path.string());
}

}  // namespace

void save_shader(const std::string& dir, const std::string& kernel, const std::vector<uint32_t>& spirv) {
  // The kernel name becomes a file name: anything but [A-Za-z0-9_.-] turns into '_'.
  std::string name = kernel.empty() ? std::string("kernel") : kernel;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  if (name == "." || name == "..") name = "_";
  std::filesystem::path base(dir);
  std::error_code ec;
  std::filesystem::create_directories(base, ec);
  if (ec) io_error("vulkan: cannot create the shader dump directory ", dir, ": ", ec.message());
  write_file(base / (name + ".spv"), reinterpret_cast<const char*>(spirv.data()), spirv.size() * 4);
#ifdef ANVIL_HAVE_SPIRV_TOOLS
  spv_context ctx = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  spv_text text = nullptr;
  spv_diagnostic diag = nullptr;
  spv_result_t r = spvBinaryToText(
      ctx, spirv.data(), spirv.size(),
      SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES | SPV_BINARY_TO_TEXT_OPTION_COMMENT | SPV_BINARY_TO_TEXT_OPTION_INDENT,
      &text, &diag);
  std::string out = r == SPV_SUCCESS
                        ? std::string(text->str, text->length)
                        : std::string("; disassembly failed: ") + (diag ? diag->error : "unknown error") + "\n";
  spvTextDestroy(text);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(ctx);
  write_file(base / (name + ".spvasm"), out.data(), out.size());
#endif
}

}  // namespace anvil::vulkan
