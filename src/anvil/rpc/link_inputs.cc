// Checks of the linker's inputs (see link_inputs.h): ELF relocatable objects of this host and
// ar archives of them, parsed strictly from their bytes.
#include "anvil/rpc/link_inputs.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "anvil/base/error.h"
#include "anvil/runtime/module/elf_host.h"

namespace anvil::rpc {
namespace {

// Section types of LLVM that make lld act on other files (LLVM: BinaryFormat/ELF.h).
constexpr uint32_t kShtLlvmLinkerOptions = 0x6fff4c01;
constexpr uint32_t kShtLlvmDependentLibraries = 0x6fff4c04;

constexpr std::string_view kArchiveMagic = "!<arch>\n";
constexpr std::string_view kThinArchiveMagic = "!<thin>\n";

[[noreturn]] void refuse(const std::string& what, const std::string& why) {
  value_error(what, " is not accepted as linker input: ", why,
              "; only ELF relocatable objects for this host (64-bit little-endian ", elf_host::machine_name(elf_host::kMachine),
              ", as `cc -c` writes them) and ar archives of them are linked");
}

template <typename T>
T load(std::string_view bytes, uint64_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

bool looks_like_text(std::string_view bytes) {
  size_t n = std::min<size_t>(bytes.size(), 64);
  if (n == 0) return false;
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') return false;
    if (c == 0x7f) return false;
  }
  return true;
}

// `count` entries of `entry` bytes at `offset` lie inside a file of `size` bytes.
bool fits(uint64_t size, uint64_t offset, uint64_t count, uint64_t entry) {
  return offset <= size && count <= (size - offset) / entry;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Why a section of this name or type is refused, or nullptr.
const char* forbidden_section(std::string_view name, uint32_t type) {
  if (starts_with(name, ".gnu.lto_")) return "GCC LTO IR (the linker plugin would run the compiler on it)";
  if (starts_with(name, ".llvm.lto")) return "LLVM LTO IR (the linker would run the code generator on it)";
  if (name == ".deplibs" || type == kShtLlvmDependentLibraries) return "dependent libraries that the linker would search for";
  if (name == ".linker-options" || type == kShtLlvmLinkerOptions) return "linker options";
  if (name == ".gnu_debuglink" || name == ".gnu_debugaltlink") return "a link to a separate debug file";
  return nullptr;
}

}  // namespace

void check_relocatable_object(std::string_view bytes, const std::string& what) {
  const uint64_t size = bytes.size();
  if (size < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0) {
    if (looks_like_text(bytes)) refuse(what, "it is text, not an object file (linker scripts are refused)");
    refuse(what, "it does not start with the ELF magic \\x7fELF");
  }
  if (size < sizeof(Elf64_Ehdr)) refuse(what, str_cat("it has ", size, " bytes, too few for an ELF header"));
  const auto eh = load<Elf64_Ehdr>(bytes, 0);
  if (std::string problem = elf_host::identity_problem(eh); !problem.empty()) refuse(what, problem);
  if (eh.e_type != ET_REL) {
    const char* kind = eh.e_type == ET_DYN ? "a shared library or PIE" : eh.e_type == ET_EXEC ? "an executable" : "not relocatable";
    refuse(what, str_cat("its ELF type is ", eh.e_type, " (", kind, "), not ET_REL (1)"));
  }
  if (eh.e_ehsize != sizeof(Elf64_Ehdr)) refuse(what, str_cat("its ELF header size is ", eh.e_ehsize, ", not ", sizeof(Elf64_Ehdr)));
  if (eh.e_shoff == 0) refuse(what, "it has no section header table");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) refuse(what, str_cat("its section header size is ", eh.e_shentsize, ", not ", sizeof(Elf64_Shdr)));
  if (!fits(size, eh.e_shoff, 1, sizeof(Elf64_Shdr))) refuse(what, "its section header table lies outside the file (truncated?)");
  // More than 0xff00 sections: the count and the name table's index live in section 0.
  const auto first = load<Elf64_Shdr>(bytes, eh.e_shoff);
  const uint64_t count = eh.e_shnum != 0 ? eh.e_shnum : first.sh_size;
  const uint64_t names_index = eh.e_shstrndx != SHN_XINDEX ? eh.e_shstrndx : first.sh_link;
  if (!fits(size, eh.e_shoff, count, sizeof(Elf64_Shdr))) {
    refuse(what, str_cat("its section header table (", count, " entries) lies outside the file (truncated?)"));
  }
  if (names_index == SHN_UNDEF || names_index >= count) refuse(what, "it has no section name table");
  auto section = [&](uint64_t i) { return load<Elf64_Shdr>(bytes, eh.e_shoff + i * sizeof(Elf64_Shdr)); };
  for (uint64_t i = 1; i < count; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_type != SHT_NOBITS && !fits(size, sh.sh_offset, sh.sh_size, 1)) {
      refuse(what, str_cat("section ", i, " lies outside the file (truncated?)"));
    }
  }
  const Elf64_Shdr names = section(names_index);
  if (names.sh_type != SHT_STRTAB) refuse(what, "its section name table is not a string table");
  std::string_view table = bytes.substr(names.sh_offset, names.sh_size);
  for (uint64_t i = 1; i < count; ++i) {
    const Elf64_Shdr sh = section(i);
    if (sh.sh_name >= table.size()) refuse(what, str_cat("the name of section ", i, " lies outside the name table"));
    size_t end = table.find('\0', sh.sh_name);
    if (end == std::string_view::npos) refuse(what, str_cat("the name of section ", i, " is not terminated"));
    std::string_view name = table.substr(sh.sh_name, end - sh.sh_name);
    if (const char* why = forbidden_section(name, sh.sh_type)) {
      refuse(what, str_cat("its section '", name, "' carries ", why));
    }
  }
}

void check_link_input(std::string_view bytes, const std::string& what) {
  if (starts_with(bytes, kThinArchiveMagic)) refuse(what, "it is a thin archive (its members are other files, named by path)");
  if (!starts_with(bytes, kArchiveMagic)) {
    check_relocatable_object(bytes, what);
    return;
  }
  // ar format: 60-byte member headers (name[16] date[12] uid[6] gid[6] mode[8] size[10] "`\n"),
  // each member's data padded to an even length.
  constexpr size_t kHeader = 60;
  size_t pos = kArchiveMagic.size();
  int index = 0;
  while (pos < bytes.size()) {
    ++index;
    std::string where = str_cat(what, " (archive member ", index, ")");
    if (bytes.size() - pos < kHeader) refuse(where, "its header is truncated");
    std::string_view header = bytes.substr(pos, kHeader);
    if (header.substr(58, 2) != "`\n") refuse(where, "its header does not end with \"`\\n\"");
    std::string_view size_field = header.substr(48, 10);
    uint64_t member_size = 0;
    size_t digits = 0;
    while (digits < size_field.size() && size_field[digits] >= '0' && size_field[digits] <= '9') {
      member_size = member_size * 10 + static_cast<uint64_t>(size_field[digits] - '0');
      ++digits;
    }
    if (digits == 0 || size_field.substr(digits).find_first_not_of(' ') != std::string_view::npos) {
      refuse(where, "its size field is not a decimal number");
    }
    size_t data = pos + kHeader;
    if (member_size > bytes.size() - data) refuse(where, "its data extends past the end of the archive (truncated?)");
    std::string_view body = bytes.substr(data, member_size);
    std::string_view name = header.substr(0, 16);
    name = name.substr(0, name.find_last_not_of(' ') + 1);
    pos = data + member_size + (member_size & 1);
    // The symbol index (GNU "/" and "/SYM64/", BSD "__.SYMDEF...") and GNU's long-name table.
    if (name == "/" || name == "/SYM64/" || name == "//" || starts_with(name, "__.SYMDEF")) continue;
    if (starts_with(name, "#1/")) {
      // BSD long name: its length in the header, the name first in the data.
      uint64_t name_length = 0;
      for (char c : name.substr(3)) {
        if (c < '0' || c > '9') refuse(where, "its BSD long-name length is not a number");
        name_length = name_length * 10 + static_cast<uint64_t>(c - '0');
      }
      if (name_length > body.size()) refuse(where, "its BSD long name extends past its data");
      body = body.substr(name_length);
    }
    check_relocatable_object(body, where);
  }
}

void check_link_input_file(const std::filesystem::path& path, const std::string& what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) io_error(what, ": cannot open it: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(what, "it is not a regular file");
  }
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  if (done != bytes.size()) io_error(what, ": reading it failed after ", done, " of ", bytes.size(), " bytes");
  check_link_input(bytes, what);
}

}  // namespace anvil::rpc
