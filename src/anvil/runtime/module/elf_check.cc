// ELF sanity checks for kernel libraries: the ELF header, the program headers and the section
// headers; the dynamic table is checked in elf_dynamic_check.cc.
#include "anvil/runtime/module/elf_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "anvil/runtime/module/elf_host.h"
#include "anvil/runtime/module/elf_image.h"

namespace anvil {
namespace {

using elf_detail::Image;
using elf_detail::SectionFacts;
using elf_detail::Segment;

// Larger than any real library's address span; a flipped high bit in a size goes past it.
constexpr uint64_t kMaxAddress = uint64_t{1} << 46;

bool power_of_two(uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }

uint64_t page_size() {
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? static_cast<uint64_t>(p) : 4096;
}

Elf64_Ehdr check_header(const Image& image) {
  if (image.size() < sizeof(Elf64_Ehdr)) image.bad("file too small for an ELF header");
  auto eh = image.read<Elf64_Ehdr>(0, "the ELF header");
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) image.bad("not an ELF file");
  if (std::string problem = elf_host::identity_problem(eh); !problem.empty()) image.bad(problem);
  if (eh.e_type != ET_DYN) image.bad("not a shared library (ELF type ", eh.e_type, ")");
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) image.bad("ELF header size is ", eh.e_ehsize, ", expected 64");
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum == PN_XNUM ||
      !image.in_file(eh.e_phoff, uint64_t{eh.e_phnum} * sizeof(Elf64_Phdr)))
    image.bad("program header table lies outside the file (truncated?)");
  if (eh.e_shnum != 0 && (eh.e_shentsize != sizeof(Elf64_Shdr) ||
                          !image.in_file(eh.e_shoff, uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr))))
    image.bad("section header table lies outside the file (truncated?)");
  return eh;
}

// The loadable segments: inside the file, sizes consistent, sorted and disjoint.
struct ProgramHeaders {
  bool has_dynamic = false;
  Segment dynamic;
  bool has_tls = false;
  Segment tls;
  std::vector<ElfLoadInfo::Range> relro;
};

ProgramHeaders check_program_headers(Image& image, const Elf64_Ehdr& eh) {
  const uint64_t page = page_size();
  ProgramHeaders out;
  std::vector<Elf64_Phdr> others;
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    auto ph = image.read<Elf64_Phdr>(eh.e_phoff + i * sizeof(Elf64_Phdr), "a program header");
    if (ph.p_type != PT_LOAD) {
      others.push_back(ph);
      continue;
    }
    std::string which = "loadable segment " + std::to_string(image.loads.size());
    if (!image.in_file(ph.p_offset, ph.p_filesz))
      image.bad(which, " extends past the end of the file (truncated?)");
    // The loader reads its tables from the segments; a segment it cannot read is corrupt.
    if ((ph.p_flags & PF_R) == 0) image.bad(which, " is not readable");
    if (ph.p_filesz > ph.p_memsz)
      image.bad(which, ": file size ", ph.p_filesz, " exceeds memory size ", ph.p_memsz);
    if (ph.p_vaddr > kMaxAddress || ph.p_memsz > kMaxAddress - ph.p_vaddr)
      image.bad(which, ": address range ", Image::hex(ph.p_vaddr), " + ", Image::hex(ph.p_memsz), " is implausible");
    if (ph.p_align > 1 && (!power_of_two(ph.p_align) || (ph.p_vaddr - ph.p_offset) % ph.p_align != 0))
      image.bad(which, ": alignment ", ph.p_align, " does not match its offset and address");
    if ((ph.p_vaddr - ph.p_offset) % page != 0) image.bad(which, ": offset and address differ by a partial page");
    if (!image.loads.empty()) {
      const Segment& prev = image.loads.back();
      if (ph.p_vaddr < prev.vaddr + prev.memsz)
        image.bad(which, " overlaps or precedes the segment before it");
    }
    image.loads.push_back({ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags});
  }
  if (image.loads.empty()) image.bad("no loadable segment");

  for (const Elf64_Phdr& ph : others) {
    switch (ph.p_type) {
      case PT_DYNAMIC: {
        if (out.has_dynamic) image.bad("more than one dynamic segment");
        if (ph.p_filesz != ph.p_memsz || ph.p_filesz % sizeof(Elf64_Dyn) != 0 || ph.p_filesz == 0)
          image.bad("dynamic segment size ", ph.p_filesz, "/", ph.p_memsz, " is not a whole number of entries");
        if (image.file_offset(ph.p_vaddr, ph.p_filesz, "the dynamic table") != ph.p_offset)
          image.bad("the dynamic segment's file offset and address disagree");
        out.dynamic = {ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
        out.has_dynamic = true;
        break;
      }
      case PT_TLS:
        if (ph.p_filesz > ph.p_memsz || !power_of_two(ph.p_align) || ph.p_memsz > kMaxAddress)
          image.bad("thread-local segment sizes or alignment are inconsistent");
        image.file_offset(ph.p_vaddr, ph.p_filesz, "the thread-local data image");
        out.has_tls = ph.p_memsz > 0;
        out.tls = {ph.p_vaddr, ph.p_memsz, ph.p_offset, ph.p_filesz, ph.p_flags};
        break;
      case PT_GNU_RELRO: {
        // It starts a writable segment; after relocation the loader write-protects whole pages,
        // from the page holding its start up to the page holding its end (exclusive), which
        // must not reach another writable segment (lld pads the range up to a page end).
        auto starts = std::find_if(image.loads.begin(), image.loads.end(),
                                   [&](const Segment& s) { return s.vaddr == ph.p_vaddr && s.writable(); });
        if (starts == image.loads.end() || ph.p_memsz > kMaxAddress)
          image.bad("the RELRO range does not start a writable segment");
        // Inside that segment, or (lld) all of it with p_memsz padded up to the next page.
        uint64_t seg_end = starts->vaddr + starts->memsz;
        bool inside = ph.p_filesz <= ph.p_memsz && ph.p_memsz <= starts->memsz;
        bool padded = ph.p_filesz < ph.p_memsz && ph.p_vaddr + ph.p_filesz == seg_end &&
                      ph.p_vaddr + ph.p_memsz <= (seg_end + page - 1) / page * page;
        if (!inside && !padded) image.bad("the RELRO range does not fit its segment");
        uint64_t begin = ph.p_vaddr / page * page, end = (ph.p_vaddr + ph.p_memsz) / page * page;
        for (const Segment& s : image.loads)
          if (&s != &*starts && s.writable() && s.vaddr < end && s.vaddr + s.memsz > begin)
            image.bad("the RELRO range would write-protect another writable segment");
        if (end > begin) out.relro.push_back({begin, end, false});
        break;
      }
      case PT_NOTE:
      case PT_GNU_PROPERTY: {
        // The loader parses the notes it finds here (CPU feature properties).
        if (ph.p_memsz == 0) break;
        uint64_t off = image.file_offset(ph.p_vaddr, ph.p_memsz, "a note segment");
        uint64_t pos = 0;
        while (ph.p_memsz - pos >= sizeof(Elf64_Nhdr)) {
          auto note = image.read<Elf64_Nhdr>(off + pos, "a note");
          uint64_t body = ((uint64_t{note.n_namesz} + 3) & ~uint64_t{3}) + ((uint64_t{note.n_descsz} + 3) & ~uint64_t{3});
          if (body > ph.p_memsz - pos - sizeof(Elf64_Nhdr)) image.bad("a note runs past the end of its segment");
          pos += sizeof(Elf64_Nhdr) + body;
          if (ph.p_align == 8) pos = (pos + 7) & ~uint64_t{7};
        }
        break;
      }
      default: break;
    }
  }
  if (!out.has_dynamic) image.bad("no dynamic segment");
  return out;
}

// Section headers are not used by the dynamic loader, but they say what the code expects: every
// allocated section must lie in the segments (a shrunk p_memsz leaves .bss unmapped), and the
// static symbol table tells where functions start (checked against init/fini entry points).
SectionFacts check_sections(const Image& image, const Elf64_Ehdr& eh) {
  SectionFacts facts;
  if (eh.e_shnum == 0) return facts;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (uint64_t i = 0; i < eh.e_shnum; ++i)
    sections[i] = image.read<Elf64_Shdr>(eh.e_shoff + i * sizeof(Elf64_Shdr), "a section header");
  facts.have_sections = true;
  for (const Elf64_Shdr& sh : sections) facts.sections.push_back({sh.sh_addr, sh.sh_size});
  for (uint64_t i = 1; i < sections.size(); ++i) {
    const Elf64_Shdr& sh = sections[i];
    std::string which = "section " + std::to_string(i);
    if (sh.sh_type != SHT_NOBITS && !image.in_file(sh.sh_offset, sh.sh_size))
      image.bad(which, " lies outside the file (truncated?)");
    if (!(sh.sh_flags & SHF_ALLOC) || sh.sh_size == 0) continue;
    if (sh.sh_type == SHT_NOBITS) {
      if ((sh.sh_flags & SHF_TLS) == 0 && image.segment_of(sh.sh_addr, sh.sh_size) == nullptr)
        image.bad(which, " (zero-initialised data) lies outside the loaded segments");
    } else if (image.file_offset(sh.sh_addr, sh.sh_size, which) != sh.sh_offset) {
      image.bad(which, ": its file offset and address disagree with the segments");
    }
  }
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB) continue;
    if (sh.sh_entsize != sizeof(Elf64_Sym)) image.bad("the symbol table's entry size is ", sh.sh_entsize);
    facts.have_symtab = true;
    for (uint64_t k = 1; k < sh.sh_size / sizeof(Elf64_Sym); ++k) {
      auto sym = image.read<Elf64_Sym>(sh.sh_offset + k * sizeof(Elf64_Sym), "a symbol");
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && sym.st_shndx != SHN_UNDEF) facts.function_starts.push_back(sym.st_value);
    }
  }
  std::sort(facts.function_starts.begin(), facts.function_starts.end());
  return facts;
}

}  // namespace

bool elf_detail::SectionFacts::is_function_start(uint64_t v) const {
  return std::binary_search(function_starts.begin(), function_starts.end(), v);
}

bool ElfLoadInfo::contains(uint64_t offset, uint64_t size, bool for_writing) const {
  for (const Range& r : segments) {
    if (offset < r.begin || offset > r.end || size > r.end - offset) continue;
    if (!for_writing) return true;
    if (!r.writable) return false;
    auto overlaps = [&](const Range& p) { return offset < p.end && offset + size > p.begin; };
    if (std::any_of(relro.begin(), relro.end(), overlaps)) return false;
    // Relocation targets are at most 16 bytes wide: look from 16 bytes before offset on.
    auto it = std::lower_bound(relocated.begin(), relocated.end(), offset < 16 ? 0 : offset - 16,
                               [](const Range& p, uint64_t v) { return p.begin < v; });
    for (; it != relocated.end() && it->begin < offset + size; ++it)
      if (overlaps(*it)) return false;
    return true;
  }
  return false;
}

ElfLoadInfo check_elf_image(std::string_view bytes, const std::string& name) {
  Image image(bytes, name);
  Elf64_Ehdr eh = check_header(image);
  ProgramHeaders ph = check_program_headers(image, eh);
  SectionFacts sections = check_sections(image, eh);
  ElfLoadInfo info;
  info.relocated = elf_detail::check_dynamic(image, ph.dynamic, sections, ph.has_tls ? &ph.tls : nullptr);
  for (const Segment& s : image.loads)
    if (s.flags & PF_R) info.segments.push_back({s.vaddr, s.vaddr + s.memsz, s.writable()});
  info.relro = std::move(ph.relro);
  return info;
}

ElfLoadInfo check_elf_library(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) io_error("load_module: cannot read '", path, "': ", std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    int err = errno;
    close(fd);
    io_error("load_module: cannot read '", path, "': ", std::strerror(err));
  }
  const auto size = static_cast<size_t>(st.st_size);
  if (size == 0) {
    close(fd);
    return check_elf_image({}, path);  // throws: too small
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int err = errno;
  close(fd);
  if (map == MAP_FAILED) io_error("load_module: cannot read '", path, "': ", std::strerror(err));
  struct Unmap {
    void* p;
    size_t n;
    ~Unmap() { munmap(p, n); }
  } unmap{map, size};
  return check_elf_image(std::string_view(static_cast<const char*>(map), size), path);
}

}  // namespace anvil
