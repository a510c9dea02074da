// Internal to the ELF pre-check (elf_check.cc, elf_dynamic_check.cc): bounds-checked access to a
// library image, its loadable segments and the address-to-file translation the dynamic loader
// applies. Every read is checked; a failed check throws the IOError of check_elf_image.
#pragma once

#include <elf.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "anvil/base/error.h"
#include "anvil/runtime/module/elf_check.h"

namespace anvil::elf_detail {

struct Segment {
  uint64_t vaddr = 0, memsz = 0, offset = 0, filesz = 0;
  uint32_t flags = 0;
  bool executable() const { return (flags & PF_X) != 0; }
  bool writable() const { return (flags & PF_W) != 0; }
};

class Image {
 public:
  Image(std::string_view bytes, const std::string& name) : bytes_(bytes), name_(name) {}

  template <typename... Args>
  [[noreturn]] void bad(Args&&... args) const {
    io_error("load_module: '", name_, "' is not a loadable shared library: ", std::forward<Args>(args)...);
  }

  uint64_t size() const { return bytes_.size(); }
  const std::string& name() const { return name_; }

  // True when [offset, offset + n) lies inside the file.
  bool in_file(uint64_t offset, uint64_t n) const { return offset <= size() && n <= size() - offset; }

  // A T read at file offset `offset`; `what` names it in the error.
  template <typename T>
  T read(uint64_t offset, const char* what) const {
    if (!in_file(offset, sizeof(T))) bad(what, " lies outside the file (truncated?)");
    T value;
    std::memcpy(&value, bytes_.data() + offset, sizeof(T));
    return value;
  }

  // The PT_LOAD segments, sorted by address (filled by the program-header check).
  std::vector<Segment> loads;

  // The segment whose memory holds [vaddr, vaddr + n), or nullptr.
  const Segment* segment_of(uint64_t vaddr, uint64_t n) const {
    for (const Segment& s : loads)
      if (vaddr >= s.vaddr && vaddr - s.vaddr <= s.memsz && n <= s.memsz - (vaddr - s.vaddr)) return &s;
    return nullptr;
  }

  // The file offset of [vaddr, vaddr + n) when it lies in the file-backed part of one segment
  // (what the dynamic loader reads there comes from the file); otherwise an error naming `what`.
  uint64_t file_offset(uint64_t vaddr, uint64_t n, const std::string& what) const {
    for (const Segment& s : loads)
      if (vaddr >= s.vaddr && vaddr - s.vaddr <= s.filesz && n <= s.filesz - (vaddr - s.vaddr))
        return s.offset + (vaddr - s.vaddr);
    bad(what, " (address ", hex(vaddr), ", ", n, " bytes) lies outside the loaded part of the file");
  }

  // A NUL-terminated string at file offset [begin + index, begin + limit).
  std::string_view string_at(uint64_t begin, uint64_t limit, uint64_t index, const std::string& what) const {
    if (index >= limit) bad(what, ": string offset ", index, " is past the end of its string table (", limit, " bytes)");
    const char* start = bytes_.data() + begin + index;
    const void* nul = std::memchr(start, '\0', limit - index);
    if (nul == nullptr) bad(what, ": string at offset ", index, " is not terminated inside its string table");
    return std::string_view(start, static_cast<const char*>(nul) - start);
  }

  static std::string hex(uint64_t v) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
  }

 private:
  std::string_view bytes_;
  const std::string& name_;
};

// What the section headers tell about entry points (from .symtab, when present).
struct SectionFacts {
  bool have_sections = false;
  std::vector<std::pair<uint64_t, uint64_t>> sections;  // address and size, by section index
  bool have_symtab = false;
  std::vector<uint64_t> function_starts;  // sorted st_value of defined STT_FUNC symbols
  bool is_function_start(uint64_t v) const;
};

// The dynamic-table checks (elf_dynamic_check.cc); returns the byte ranges that relocations
// write, sorted.
std::vector<ElfLoadInfo::Range> check_dynamic(const Image& image, const Segment& dynamic, const SectionFacts& sections,
                                              const Segment* tls);

}  // namespace anvil::elf_detail
