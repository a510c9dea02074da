// The ELF identity of the host this is built for: one fact, read by the shared-library
// pre-check (elf_check.cc) and the RPC server's check of linker inputs (rpc/link_inputs.cc).
#pragma once

#include <elf.h>

#include <cstdint>
#include <string>

namespace anvil::elf_host {

#if defined(__x86_64__)
inline constexpr uint16_t kMachine = EM_X86_64;
#elif defined(__aarch64__)
inline constexpr uint16_t kMachine = EM_AARCH64;
#elif defined(__riscv) && __riscv_xlen == 64
inline constexpr uint16_t kMachine = EM_RISCV;
#else
inline constexpr uint16_t kMachine = 0;  // unknown host: the machine check is skipped
#endif
static_assert(sizeof(void*) == 8 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "elf_host.h describes 64-bit little-endian hosts: extend it for this one");

inline const char* machine_name(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86_64";
    case EM_AARCH64: return "aarch64";
    case EM_RISCV: return "riscv";
    case EM_ARM: return "arm";
    case EM_386: return "i386";
    default: return "another architecture";
  }
}

// What keeps `eh` from being a 64-bit little-endian version-1 ELF header for this host's
// machine (the ELF type is the caller's to check), or "" when nothing does.
inline std::string identity_problem(const Elf64_Ehdr& eh) {
  if (eh.e_ident[EI_CLASS] != ELFCLASS64)
    return "not a 64-bit ELF file (class " + std::to_string(int{eh.e_ident[EI_CLASS]}) + ")";
  if (eh.e_ident[EI_DATA] != ELFDATA2LSB) return "not a little-endian ELF file";
  if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) return "its ELF version is not 1";
  if (kMachine != 0 && eh.e_machine != kMachine)
    return std::string("built for ") + machine_name(eh.e_machine) + " (ELF machine " + std::to_string(eh.e_machine) +
           "), but this host is " + machine_name(kMachine);
  return "";
}

}  // namespace anvil::elf_host
