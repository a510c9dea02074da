// Checks a shared library's ELF structure before dlopen. The dynamic loader trusts the file: a
// truncated library dies with SIGBUS touching the missing pages, and one flipped bit in a program
// header, the dynamic table or a relocation makes it read or write outside the image. So the file
// is validated first: the ELF header (magic, class, byte order, type, machine), every program
// header (segments inside the file, sizes consistent, sorted, not overlapping), the dynamic table
// and everything it points to (string and symbol tables, hash tables, symbol versions,
// relocations and their targets, init/fini entry points), and the section headers when present.
// A library built by TVM is recognised by its symbols and named as such.
//
// This guards against corruption, not against a hostile author: a well-formed library runs its
// own code when loaded, so loading a library in-process is code execution by nature (an RPC
// session contains it in the server's process, see docs/rpc.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace anvil {

// What the loader needs after dlopen to read the library's own symbols safely. Addresses are
// relative to the load base (the link map's l_addr).
struct ElfLoadInfo {
  struct Range {
    uint64_t begin = 0, end = 0;  // [begin, end)
    bool writable = false;
  };
  std::vector<Range> segments;  // readable PT_LOAD memory ranges
  std::vector<Range> relro;     // page ranges made read-only after relocation (PT_GNU_RELRO)
  std::vector<Range> relocated;  // bytes the loader's relocations write, sorted by begin

  // True when [offset, offset + size) lies inside one readable segment (and, when
  // `for_writing`, a writable one, outside RELRO and touching no relocated word).
  bool contains(uint64_t offset, uint64_t size, bool for_writing = false) const;
};

// Checks the library image `bytes` (the whole file); `name` appears in messages. Throws IOError
// "load_module: '<name>' is not a loadable shared library: <what is wrong>".
ElfLoadInfo check_elf_image(std::string_view bytes, const std::string& name);

// Reads `path` and checks it as above; throws IOError when it cannot be read.
ElfLoadInfo check_elf_library(const std::string& path);

}  // namespace anvil
