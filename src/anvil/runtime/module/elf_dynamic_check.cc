// The dynamic table and what it points to, checked the way the dynamic loader will use it: every
// address it dereferences must lie in the loaded file, every table it walks must end, every entry
// it trusts (relocation counts, version indices, entry sizes) must be consistent, and every
// relocation must write inside a writable segment. Also recognises libraries built by TVM.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>

#include "anvil/runtime/module/elf_image.h"

namespace anvil::elf_detail {
namespace {

struct RelocType {
  uint32_t type;
  uint8_t width;  // bytes written at r_offset
  bool relative;
  bool tls;
  const char* forbidden;  // why it is refused, or nullptr
  bool aligned = false;   // a GOT slot: always aligned to its width
};

// The relocation types the loader may process in a shared library of this machine.
std::optional<RelocType> reloc_type(uint16_t machine, uint32_t type) {
  static const RelocType x86_64[] = {
      {R_X86_64_NONE, 0, false, false, nullptr},
      {R_X86_64_64, 8, false, false, nullptr},
      {R_X86_64_GLOB_DAT, 8, false, false, nullptr, true},
      {R_X86_64_JUMP_SLOT, 8, false, false, nullptr, true},
      {R_X86_64_RELATIVE, 8, true, false, nullptr},
      {R_X86_64_RELATIVE64, 8, true, false, nullptr},
      {R_X86_64_DTPMOD64, 8, false, true, nullptr, true},
      {R_X86_64_DTPOFF64, 8, false, true, nullptr, true},
      {R_X86_64_TPOFF64, 8, false, true, nullptr, true},
      {R_X86_64_TLSDESC, 16, false, true, nullptr, true},
      {R_X86_64_PC32, 0, false, false, "a 32-bit relocation (code not compiled position-independent)"},
      {R_X86_64_32, 0, false, false, "a 32-bit relocation (code not compiled position-independent)"},
      {R_X86_64_32S, 0, false, false, "a 32-bit relocation (code not compiled position-independent)"},
      {R_X86_64_COPY, 0, false, false, "a copy relocation (executables only)"},
      {R_X86_64_IRELATIVE, 0, false, false, "an indirect-function (IFUNC) relocation"},
  };
  static const RelocType aarch64[] = {
      {R_AARCH64_NONE, 0, false, false, nullptr},
      {R_AARCH64_ABS64, 8, false, false, nullptr},
      {R_AARCH64_GLOB_DAT, 8, false, false, nullptr, true},
      {R_AARCH64_JUMP_SLOT, 8, false, false, nullptr, true},
      {R_AARCH64_RELATIVE, 8, true, false, nullptr},
      {R_AARCH64_TLS_DTPMOD, 8, false, true, nullptr, true},
      {R_AARCH64_TLS_DTPREL, 8, false, true, nullptr, true},
      {R_AARCH64_TLS_TPREL, 8, false, true, nullptr, true},
      {R_AARCH64_TLSDESC, 16, false, true, nullptr, true},
      {R_AARCH64_COPY, 0, false, false, "a copy relocation (executables only)"},
      {R_AARCH64_IRELATIVE, 0, false, false, "an indirect-function (IFUNC) relocation"},
  };
  auto find = [&](const auto& table) -> std::optional<RelocType> {
    for (const RelocType& t : table)
      if (t.type == type) return t;
    return std::nullopt;
  };
  if (machine == EM_X86_64) return find(x86_64);
  if (machine == EM_AARCH64) return find(aarch64);
  return RelocType{type, 0, false, false, nullptr};  // unknown machine: only the table bounds are checked
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

class DynamicChecker {
 public:
  DynamicChecker(const Image& image, const Segment& dynamic, const SectionFacts& sections, const Segment* tls,
                 uint16_t machine)
      : image_(image), dynamic_(dynamic), sections_(sections), tls_(tls), machine_(machine) {}

  std::vector<ElfLoadInfo::Range> run() {
    read_table();
    check_strings();
    count_symbols();
    check_symbols();
    check_versions();
    check_relocations();
    check_entry_points();
    if (!defines_anvil_ && (defines_tvm_ || uses_tvm_))
      io_error("load_module: '", image_.name(), "': this library was built by TVM, not Anvil (it ",
               defines_tvm_ ? "defines " : "calls ", tvm_symbol_,
               "). Anvil's kernel ABI is not TVM's (docs/abi.md): build and export the model with Anvil to "
               "load it here, or load it with TVM");
    std::sort(targets_.begin(), targets_.end(),
              [](const ElfLoadInfo::Range& a, const ElfLoadInfo::Range& b) { return a.begin < b.begin; });
    // Two relocations writing the same bytes: one of them was meant for another place.
    for (size_t i = 1; i < targets_.size(); ++i)
      if (targets_[i].begin < targets_[i - 1].end)
        bad("two relocations write overlapping bytes at ", Image::hex(targets_[i].begin));
    return std::move(targets_);
  }

 private:
  bool has(int64_t tag) const { return tags_.count(tag) != 0; }
  uint64_t val(int64_t tag) const { return tags_.at(tag); }
  template <typename... Args>
  [[noreturn]] void bad(Args&&... args) const {
    image_.bad(std::forward<Args>(args)...);
  }
  void require(int64_t tag, const char* tag_name, const char* because) const {
    if (!has(tag)) bad("the dynamic table has ", because, " but no ", tag_name);
  }

  // The table up to DT_NULL; the last entry of a tag wins, as in the loader.
  void read_table() {
    uint64_t n = dynamic_.filesz / sizeof(Elf64_Dyn);
    bool ended = false;
    for (uint64_t i = 0; i < n && !ended; ++i) {
      auto d = image_.read<Elf64_Dyn>(dynamic_.offset + i * sizeof(Elf64_Dyn), "a dynamic entry");
      if (d.d_tag == DT_NULL) {
        ended = true;
      } else if (d.d_tag == DT_NEEDED) {
        needed_.push_back(d.d_un.d_val);
      } else {
        tags_[d.d_tag] = d.d_un.d_val;
      }
    }
    if (!ended) bad("the dynamic table has no end marker (DT_NULL)");
    require(DT_STRTAB, "DT_STRTAB", "symbols");
    require(DT_STRSZ, "DT_STRSZ", "a string table");
    require(DT_SYMTAB, "DT_SYMTAB", "a string table");
    if (!has(DT_HASH) && !has(DT_GNU_HASH)) bad("the dynamic table has no symbol hash table");
    if (has(DT_SYMENT) && val(DT_SYMENT) != sizeof(Elf64_Sym)) bad("DT_SYMENT is ", val(DT_SYMENT), ", expected 24");
    if (has(DT_REL) || has(DT_RELSZ) || has(DT_RELENT) || has(DT_RELCOUNT))
      bad("REL relocations, which this machine does not use (RELA only)");
    if (has(DT_RELA)) {
      require(DT_RELASZ, "DT_RELASZ", "DT_RELA");
      require(DT_RELAENT, "DT_RELAENT", "DT_RELA");
    }
    if (has(DT_RELAENT) && val(DT_RELAENT) != sizeof(Elf64_Rela)) bad("DT_RELAENT is ", val(DT_RELAENT), ", expected 24");
    if (has(DT_RELASZ) && !has(DT_RELA)) bad("DT_RELASZ without DT_RELA");
    if (has(DT_RELACOUNT) && !has(DT_RELA)) bad("DT_RELACOUNT without DT_RELA");
    if (has(DT_PLTREL) || has(DT_JMPREL) || has(DT_PLTRELSZ)) {
      require(DT_PLTREL, "DT_PLTREL", "PLT relocations");
      require(DT_JMPREL, "DT_JMPREL", "PLT relocations");
      require(DT_PLTRELSZ, "DT_PLTRELSZ", "PLT relocations");
      if (val(DT_PLTREL) != DT_RELA) bad("DT_PLTREL is ", val(DT_PLTREL), ", expected DT_RELA (7)");
    }
    if (has(DT_RELR) || has(DT_RELRSZ) || has(DT_RELRENT)) {
      require(DT_RELR, "DT_RELR", "RELR relocations");
      require(DT_RELRSZ, "DT_RELRSZ", "RELR relocations");
      require(DT_RELRENT, "DT_RELRENT", "RELR relocations");
      if (val(DT_RELRENT) != sizeof(Elf64_Relr)) bad("DT_RELRENT is ", val(DT_RELRENT), ", expected 8");
    }
    if (has(DT_INIT_ARRAY) != has(DT_INIT_ARRAYSZ)) bad("DT_INIT_ARRAY and DT_INIT_ARRAYSZ must come together");
    if (has(DT_FINI_ARRAY) != has(DT_FINI_ARRAYSZ)) bad("DT_FINI_ARRAY and DT_FINI_ARRAYSZ must come together");
    if (has(DT_VERDEF) != has(DT_VERDEFNUM)) bad("DT_VERDEF and DT_VERDEFNUM must come together");
    if (has(DT_VERNEED) != has(DT_VERNEEDNUM)) bad("DT_VERNEED and DT_VERNEEDNUM must come together");
    // With version tables the loader reads the symbol versions unconditionally.
    if ((has(DT_VERNEED) || has(DT_VERDEF)) && !has(DT_VERSYM)) bad("version tables but no DT_VERSYM");
    textrel_ = has(DT_TEXTREL) || (has(DT_FLAGS) && (val(DT_FLAGS) & DF_TEXTREL));
  }

  std::string_view dynstr(uint64_t index, const char* what) const {
    return image_.string_at(strtab_, strsz_, index, what);
  }

  void check_strings() {
    strsz_ = val(DT_STRSZ);
    if (strsz_ == 0) bad("the string table is empty");
    strtab_ = image_.file_offset(val(DT_STRTAB), strsz_, "the string table");
    for (uint64_t n : needed_) needed_names_.push_back(dynstr(n, "a needed library name (DT_NEEDED)"));
    for (int64_t tag : {DT_SONAME, DT_RPATH, DT_RUNPATH, DT_AUXILIARY, DT_FILTER})
      if (has(tag)) dynstr(val(tag), "a library name or search path in the dynamic table");
  }

  uint32_t read_u32(uint64_t vaddr, const char* what) const {
    return image_.read<uint32_t>(image_.file_offset(vaddr, 4, what), what);
  }

  // The symbol count, from the hash tables (the symbol table itself has no size).
  void count_symbols() {
    if (has(DT_HASH)) {
      uint64_t h = val(DT_HASH);
      uint64_t off = image_.file_offset(h, 8, "the symbol hash table");
      uint32_t nbucket = image_.read<uint32_t>(off, "the hash table"), nchain = image_.read<uint32_t>(off + 4, "the hash table");
      if (nbucket == 0) bad("the symbol hash table has no buckets");
      off = image_.file_offset(h, 8 + 4 * (uint64_t{nbucket} + nchain), "the symbol hash table");
      std::vector<bool> seen(nchain);
      for (uint64_t b = 0; b < nbucket; ++b) {
        uint64_t steps = 0;
        for (uint32_t i = image_.read<uint32_t>(off + 8 + 4 * b, "a hash bucket"); i != 0;
             i = image_.read<uint32_t>(off + 8 + 4 * (uint64_t{nbucket} + i), "a hash chain")) {
          if (i >= nchain || seen[i] || ++steps > nchain) bad("the symbol hash table's chains are corrupt");
          seen[i] = true;
        }
      }
      nsyms_ = std::max<uint64_t>(nsyms_, nchain);
    }
    if (has(DT_GNU_HASH)) {
      uint64_t h = val(DT_GNU_HASH);
      uint64_t off = image_.file_offset(h, 16, "the GNU hash table");
      uint32_t nbuckets = image_.read<uint32_t>(off, "the GNU hash table");
      uint32_t symoffset = image_.read<uint32_t>(off + 4, "the GNU hash table");
      uint32_t bloom_size = image_.read<uint32_t>(off + 8, "the GNU hash table");
      uint32_t bloom_shift = image_.read<uint32_t>(off + 12, "the GNU hash table");
      if (nbuckets == 0 || bloom_size == 0 || (bloom_size & (bloom_size - 1)) != 0 || bloom_shift >= 64)
        bad("the GNU hash table's header is corrupt");
      uint64_t buckets = h + 16 + 8 * uint64_t{bloom_size};
      off = image_.file_offset(h, 16 + 8 * uint64_t{bloom_size} + 4 * uint64_t{nbuckets}, "the GNU hash table");
      uint64_t chains = buckets + 4 * uint64_t{nbuckets};
      uint64_t count = symoffset;
      for (uint64_t b = 0; b < nbuckets; ++b) {
        uint64_t i = image_.read<uint32_t>(off + 16 + 8 * uint64_t{bloom_size} + 4 * b, "a GNU hash bucket");
        if (i == 0) continue;
        if (i < symoffset) bad("a GNU hash bucket points below the first hashed symbol");
        while ((read_u32(chains + 4 * (i - symoffset), "a GNU hash chain") & 1) == 0) ++i;
        count = std::max(count, i + 1);
      }
      nsyms_ = std::max(nsyms_, count);
    }
    // The hash tables leave out undefined symbols past their last hashed one (ld puts them
    // first, but a library exporting nothing has symoffset 1); relocations name those too.
    for (auto [table, size_tag] : {std::pair{DT_RELA, DT_RELASZ}, {DT_JMPREL, DT_PLTRELSZ}}) {
      if (!has(table)) continue;
      uint64_t size = val(size_tag) / sizeof(Elf64_Rela) * sizeof(Elf64_Rela);
      uint64_t off = image_.file_offset(val(table), size, table == DT_RELA ? "DT_RELA" : "DT_JMPREL");
      for (uint64_t i = 0; i < size / sizeof(Elf64_Rela); ++i) {
        uint64_t sym = ELF64_R_SYM(image_.read<Elf64_Rela>(off + i * sizeof(Elf64_Rela), "a relocation").r_info);
        nsyms_ = std::max(nsyms_, sym + 1);
      }
    }
    if (nsyms_ > image_.size() / sizeof(Elf64_Sym)) bad("a relocation or hash table names more symbols than the file holds");
    symtab_ = image_.file_offset(val(DT_SYMTAB), nsyms_ * sizeof(Elf64_Sym), "the symbol table");
  }

  Elf64_Sym symbol(uint64_t i) const { return image_.read<Elf64_Sym>(symtab_ + i * sizeof(Elf64_Sym), "a symbol"); }

  void check_symbols() {
    for (uint64_t i = 1; i < nsyms_; ++i) {
      Elf64_Sym sym = symbol(i);
      std::string_view name = dynstr(sym.st_name, "a symbol name");
      unsigned type = ELF64_ST_TYPE(sym.st_info);
      bool defined = sym.st_shndx != SHN_UNDEF;
      if (defined && starts_with(name, "__anvil_")) defines_anvil_ = true;
      if (defined && starts_with(name, "__tvm_") && !defines_tvm_) {
        defines_tvm_ = true;
        tvm_symbol_ = name;
      }
      if (!defined && (starts_with(name, "TVMFFI") || starts_with(name, "TVMBackend")) && !uses_tvm_) {
        uses_tvm_ = true;
        if (!defines_tvm_) tvm_symbol_ = name;
      }
      if (!defined) {
        // An undefined reference the loader would bind to this library's address 0.
        unsigned bind = ELF64_ST_BIND(sym.st_info), vis = ELF64_ST_VISIBILITY(sym.st_other);
        if (bind == STB_LOCAL || vis == STV_HIDDEN || vis == STV_INTERNAL)
          bad("undefined symbol '", name, "' is local or hidden, so it can never be resolved");
        continue;
      }
      if (sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE) continue;
      if (type == STT_GNU_IFUNC)
        bad("it defines the indirect function (IFUNC) '", name, "', which kernel libraries may not use");
      if (type == STT_TLS) {
        if (tls_ == nullptr || sym.st_value > tls_->memsz || sym.st_size > tls_->memsz - sym.st_value)
          bad("thread-local symbol '", name, "' lies outside the thread-local segment");
      } else if (sym.st_value == 0 || image_.segment_of(sym.st_value, sym.st_size) == nullptr) {
        // Address 0 is the ELF header: no symbol is defined there.
        bad("symbol '", name, "' (", Image::hex(sym.st_value), ", ", sym.st_size, " bytes) lies outside the loaded segments");
      } else if (sections_.have_sections && (type == STT_FUNC || type == STT_OBJECT)) {
        // (Linker-made markers such as __bss_start may sit just past their section.)
        if (sym.st_shndx >= sections_.sections.size()) bad("symbol '", name, "' names section ", sym.st_shndx, ", which does not exist");
        auto [addr, size] = sections_.sections[sym.st_shndx];
        if (sym.st_value < addr || sym.st_value - addr > size || sym.st_size > size - (sym.st_value - addr))
          bad("symbol '", name, "' (", Image::hex(sym.st_value), ", ", sym.st_size, " bytes) lies outside its section");
      }
    }
  }

  // Walks a version chain of `limit` entries linked by byte offsets (the loader follows the links
  // until a zero link); returns the address of each entry.
  std::vector<uint64_t> chain(uint64_t start, uint64_t limit, uint64_t entry_size, uint64_t link_offset,
                              const char* what) const {
    std::vector<uint64_t> out;
    uint64_t at = start;
    for (uint64_t k = 0;; ++k) {
      if (k >= limit) bad(what, " do not end after the advertised count");
      image_.file_offset(at, entry_size, what);
      out.push_back(at);
      uint32_t next = read_u32(at + link_offset, what);
      if (next == 0) break;
      if (at > UINT64_MAX - next) bad(what, " are corrupt");
      at += next;
    }
    return out;
  }

  void check_versions() {
    uint64_t ndx_high = 0;
    if (has(DT_VERDEF)) {
      for (uint64_t def : chain(val(DT_VERDEF), val(DT_VERDEFNUM), sizeof(Elf64_Verdef), offsetof(Elf64_Verdef, vd_next),
                                "the version definitions")) {
        auto vd = image_.read<Elf64_Verdef>(image_.file_offset(def, sizeof(Elf64_Verdef), "a version"), "a version");
        if (vd.vd_cnt == 0) bad("a version definition has no name");
        for (uint64_t aux : chain(def + vd.vd_aux, vd.vd_cnt, sizeof(Elf64_Verdaux), offsetof(Elf64_Verdaux, vda_next),
                                  "the version definition names"))
          dynstr(read_u32(aux + offsetof(Elf64_Verdaux, vda_name), "a version name"), "a version name");
        ndx_high = std::max<uint64_t>(ndx_high, vd.vd_ndx);
      }
    }
    if (has(DT_VERNEED)) {
      for (uint64_t need : chain(val(DT_VERNEED), val(DT_VERNEEDNUM), sizeof(Elf64_Verneed),
                                 offsetof(Elf64_Verneed, vn_next), "the version requirements")) {
        auto vn = image_.read<Elf64_Verneed>(image_.file_offset(need, sizeof(Elf64_Verneed), "a version"), "a version");
        std::string_view file = dynstr(vn.vn_file, "a versioned library name");
        // The loader asserts (and aborts the process) when this names no needed library.
        if (std::find(needed_names_.begin(), needed_names_.end(), file) == needed_names_.end())
          bad("symbol versions are required from '", file, "', which is not a needed library");
        // The loader reads the first name whatever the count says.
        if (vn.vn_cnt == 0) bad("a version requirement has no names");
        for (uint64_t aux : chain(need + vn.vn_aux, vn.vn_cnt, sizeof(Elf64_Vernaux), offsetof(Elf64_Vernaux, vna_next),
                                  "the version requirement names")) {
          auto va = image_.read<Elf64_Vernaux>(image_.file_offset(aux, sizeof(Elf64_Vernaux), "a version"), "a version");
          dynstr(va.vna_name, "a version name");
          ndx_high = std::max<uint64_t>(ndx_high, va.vna_other & 0x7fff);
        }
      }
    }
    if (has(DT_VERSYM)) {
      uint64_t off = image_.file_offset(val(DT_VERSYM), 2 * nsyms_, "the symbol version table");
      for (uint64_t i = 0; i < nsyms_; ++i) {
        uint16_t v = image_.read<uint16_t>(off + 2 * i, "a symbol version") & 0x7fff;
        if (v > ndx_high) bad("symbol ", i, " has version index ", v, " but only ", ndx_high, " versions exist");
      }
    }
  }

  void check_target(uint64_t offset, uint64_t width, const std::string& what) {
    if (width == 0) return;
    const Segment* s = image_.segment_of(offset, width);
    if (s == nullptr || (!s->writable() && !textrel_))
      bad(what, " writes to ", Image::hex(offset), ", outside the writable segments");
    targets_.push_back({offset, offset + width, true});
  }

  void check_rela_table(uint64_t addr, uint64_t size, const char* name) {
    if (size % sizeof(Elf64_Rela) != 0) bad(name, " size ", size, " is not a whole number of entries");
    uint64_t off = image_.file_offset(addr, size, name);
    uint64_t count = size / sizeof(Elf64_Rela);
    uint64_t relative_count = (name == std::string_view("DT_RELA") && has(DT_RELACOUNT)) ? val(DT_RELACOUNT) : 0;
    if (relative_count > count) bad("DT_RELACOUNT (", relative_count, ") exceeds the ", count, " relocations");
    for (uint64_t i = 0; i < count; ++i) {
      auto r = image_.read<Elf64_Rela>(off + i * sizeof(Elf64_Rela), "a relocation");
      uint32_t type = ELF64_R_TYPE(r.r_info);
      uint64_t sym = ELF64_R_SYM(r.r_info);
      std::string what = std::string("relocation ") + std::to_string(i) + " of " + name;
      std::optional<RelocType> kind = reloc_type(machine_, type);
      if (!kind) bad(what, " has unknown type ", type);
      if (kind->forbidden) bad(what, " is ", kind->forbidden, ", which kernel libraries may not use");
      if (sym >= nsyms_) bad(what, " names symbol ", sym, " of ", nsyms_);
      if (kind->relative && sym != 0) bad(what, " is relative but names a symbol");
      // The loader applies the first DT_RELACOUNT entries as relative without looking at them.
      if (i < relative_count && !kind->relative) bad(what, " is counted in DT_RELACOUNT but is not relative");
      if (kind->tls && tls_ == nullptr && (sym == 0 || symbol(sym).st_shndx != SHN_UNDEF))
        bad(what, " refers to thread-local storage but the library has none");
      if (kind->aligned && r.r_offset % 8 != 0) bad(what, " writes a table slot at the misaligned address ", Image::hex(r.r_offset));
      check_target(r.r_offset, kind->width, what);
      if (kind->relative) {
        relative_[r.r_offset] = static_cast<uint64_t>(r.r_addend);
      } else if (kind->width == 8 && !kind->tls && sym != 0) {
        symbolic_[r.r_offset] = sym;
      }
    }
  }

  void check_relocations() {
    if (has(DT_RELA)) check_rela_table(val(DT_RELA), val(DT_RELASZ), "DT_RELA");
    if (has(DT_JMPREL)) {
      // The loader subtracts the PLT part when it is the tail of DT_RELA.
      if (has(DT_RELA) && val(DT_RELA) + val(DT_RELASZ) == val(DT_JMPREL) + val(DT_PLTRELSZ) &&
          val(DT_PLTRELSZ) > val(DT_RELASZ))
        bad("DT_JMPREL overlaps DT_RELA inconsistently");
      check_rela_table(val(DT_JMPREL), val(DT_PLTRELSZ), "DT_JMPREL");
      if (has(DT_PLTGOT)) check_target(val(DT_PLTGOT), 24, "the PLT's global offset table");
    }
    if (has(DT_RELR)) {
      uint64_t size = val(DT_RELRSZ);
      if (size % 8 != 0) bad("DT_RELRSZ ", size, " is not a whole number of entries");
      uint64_t off = image_.file_offset(val(DT_RELR), size, "DT_RELR");
      uint64_t base = 0;
      bool have_base = false;
      for (uint64_t i = 0; i < size / 8; ++i) {
        uint64_t e = image_.read<uint64_t>(off + 8 * i, "a RELR entry");
        if ((e & 1) == 0) {
          check_target(e, 8, "a RELR relocation");
          relr_.push_back(e);
          base = e + 8;
          have_base = true;
        } else {
          if (!have_base) bad("a RELR bitmap precedes its first address");
          for (uint64_t bit = 1; bit < 64; ++bit)
            if ((e >> bit) & 1) {
              check_target(base + 8 * (bit - 1), 8, "a RELR relocation");
              relr_.push_back(base + 8 * (bit - 1));
            }
          base += 8 * 63;
        }
      }
      std::sort(relr_.begin(), relr_.end());
    }
  }

  // An address the loader will call: a function start when the static symbol table is there,
  // at least inside executable code otherwise.
  void check_code(uint64_t vaddr, const std::string& what) const {
    const Segment* s = image_.segment_of(vaddr, 1);
    if (s == nullptr || !s->executable()) bad(what, " (", Image::hex(vaddr), ") is not in executable code");
    if (sections_.have_symtab && !sections_.is_function_start(vaddr))
      bad(what, " (", Image::hex(vaddr), ") is not the start of a function");
  }

  void check_function_array(int64_t tag, int64_t size_tag, const char* name) {
    if (!has(tag)) return;
    uint64_t addr = val(tag), size = val(size_tag);
    if (size % 8 != 0) bad(name, " size ", size, " is not a whole number of entries");
    const Segment* s = image_.segment_of(addr, size);
    if (s == nullptr) bad(name, " lies outside the loaded segments");
    for (uint64_t slot = addr; slot < addr + size; slot += 8) {
      std::string what = std::string(name) + " entry " + std::to_string((slot - addr) / 8);
      if (auto it = relative_.find(slot); it != relative_.end()) {
        check_code(it->second, what);
      } else if (symbolic_.count(slot)) {
        // Resolved by the loader to a symbol's address (an undefined one fails the load).
      } else if (std::binary_search(relr_.begin(), relr_.end(), slot)) {
        uint64_t value = image_.read<uint64_t>(image_.file_offset(slot, 8, what), "an entry point");
        check_code(value, what);
      } else {
        bad(what, " is not relocated, so it cannot hold a valid address");
      }
    }
  }

  void check_entry_points() {
    if (has(DT_INIT)) check_code(val(DT_INIT), "the initialisation function (DT_INIT)");
    if (has(DT_FINI)) check_code(val(DT_FINI), "the finalisation function (DT_FINI)");
    check_function_array(DT_INIT_ARRAY, DT_INIT_ARRAYSZ, "DT_INIT_ARRAY");
    check_function_array(DT_FINI_ARRAY, DT_FINI_ARRAYSZ, "DT_FINI_ARRAY");
  }

  const Image& image_;
  const Segment& dynamic_;
  const SectionFacts& sections_;
  const Segment* tls_;
  uint16_t machine_;
  std::map<int64_t, uint64_t> tags_;
  std::vector<uint64_t> needed_;
  std::vector<std::string_view> needed_names_;
  bool textrel_ = false;
  uint64_t strtab_ = 0, strsz_ = 0, symtab_ = 0, nsyms_ = 0;
  std::map<uint64_t, uint64_t> relative_;  // target -> addend
  std::map<uint64_t, uint64_t> symbolic_;  // target -> symbol index
  std::vector<uint64_t> relr_;
  std::vector<ElfLoadInfo::Range> targets_;
  bool defines_anvil_ = false, defines_tvm_ = false, uses_tvm_ = false;
  std::string tvm_symbol_;
};

}  // namespace

std::vector<ElfLoadInfo::Range> check_dynamic(const Image& image, const Segment& dynamic, const SectionFacts& sections,
                                              const Segment* tls) {
  auto machine = image.read<Elf64_Ehdr>(0, "the ELF header").e_machine;
  return DynamicChecker(image, dynamic, sections, tls, machine).run();
}

}  // namespace anvil::elf_detail
