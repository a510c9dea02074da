// ELF sanity checks for kernel libraries.
#include "anvil/runtime/module/elf_check.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <vector>

#include "anvil/base/error.h"

namespace anvil {
namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
constexpr const char* kHostName = "x86_64";
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
constexpr const char* kHostName = "aarch64";
#else
constexpr uint16_t kHostMachine = 0;  // unknown host: machine check skipped
constexpr const char* kHostName = "this host";
#endif

const char* machine_name(uint16_t m) {
  switch (m) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_ARM: return "arm";
    case EM_RISCV: return "riscv";
    case EM_386: return "i386";
    default: return "another architecture";
  }
}

}  // namespace

void check_elf_library(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) io_error("load_module: cannot read '", path, "'");
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  auto bad = [&](const std::string& why) { io_error("load_module: '", path, "' is not a loadable shared library: ", why); };
  Elf64_Ehdr eh{};
  if (size < sizeof(eh) || !in.read(reinterpret_cast<char*>(&eh), sizeof(eh))) bad("file too small for an ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) bad("not an ELF file");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) bad("not a 64-bit ELF file");
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) bad("not a little-endian ELF file");
  if (eh.e_type != ET_DYN) bad("not a shared library (ELF type " + std::to_string(eh.e_type) + ")");
  if (kHostMachine != 0 && eh.e_machine != kHostMachine)
    bad(std::string("built for ") + machine_name(eh.e_machine) + " but this host is " + kHostName);
  auto table_fits = [&](uint64_t offset, uint64_t count, uint64_t entry) {
    return offset <= size && count <= (size - offset) / (entry ? entry : 1);
  };
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || !table_fits(eh.e_phoff, eh.e_phnum, eh.e_phentsize))
    bad("program header table lies outside the file (truncated?)");
  if (eh.e_shnum != 0 && !table_fits(eh.e_shoff, eh.e_shnum, eh.e_shentsize))
    bad("section header table lies outside the file (truncated?)");
  std::vector<Elf64_Phdr> phdrs(eh.e_phnum);
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  if (!in.read(reinterpret_cast<char*>(phdrs.data()), static_cast<std::streamsize>(phdrs.size() * sizeof(Elf64_Phdr))))
    bad("cannot read the program headers");
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
      bad("a loadable segment extends past the end of the file (truncated?)");
  }
}

}  // namespace anvil
