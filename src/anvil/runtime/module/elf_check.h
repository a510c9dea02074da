// Checks a shared library's ELF headers before dlopen: glibc maps a truncated library and then
// dies with SIGBUS touching the missing pages, so the file is validated first (magic, class,
// machine, and every header table and loadable segment inside the file).
#pragma once

#include <string>

namespace anvil {

// Throws IOError naming the file and what is wrong.
void check_elf_library(const std::string& path);

}  // namespace anvil
