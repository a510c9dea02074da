// Corrupted copies of a real kernel library: each is loaded in a child process (so that a crash
// inside dlopen shows up as a test failure instead of killing the test) and must give a clear
// IOError or load cleanly, never a signal or an abort.
#include <gtest/gtest.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>

#include "anvil/runtime/module/library_module.h"
#include "anvil/runtime/register.h"

namespace anvil {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

template <typename T>
T get(const std::string& bytes, uint64_t offset) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof(T));
  return v;
}
template <typename T>
void put(std::string& bytes, uint64_t offset, T v) {
  std::memcpy(bytes.data() + offset, &v, sizeof(T));
}

// Where the interesting fields of the library lie (file offsets).
struct Layout {
  Elf64_Ehdr eh;
  std::vector<uint64_t> loads;  // offsets of the PT_LOAD program headers
  uint64_t dynamic_phdr = 0, dynamic = 0, dynamic_size = 0;
  std::vector<std::pair<uint64_t, uint64_t>> regions;  // headers and tables the loader reads
  // Relocation fields that carry meaning rather than structure: a symbol index or an addend
  // changed to name other valid code makes a different valid library (its code then runs as
  // written), which no check can tell apart; the random flips leave them out (targeted tests
  // still flip them out of range).
  std::vector<std::pair<uint64_t, uint64_t>> meaning;
  bool is_meaning(uint64_t offset) const {
    for (auto [off, size] : meaning)
      if (offset >= off && offset < off + size) return true;
    return false;
  }
};

Layout parse(const std::string& bytes) {
  Layout l;
  l.eh = get<Elf64_Ehdr>(bytes, 0);
  for (uint64_t i = 0; i < l.eh.e_phnum; ++i) {
    uint64_t at = l.eh.e_phoff + i * sizeof(Elf64_Phdr);
    auto ph = get<Elf64_Phdr>(bytes, at);
    if (ph.p_type == PT_LOAD) {
      l.loads.push_back(at);
      // Read-only data and writable data segments hold the dynamic tables; code is left alone.
      if (!(ph.p_flags & PF_X)) l.regions.push_back({ph.p_offset, std::min<uint64_t>(ph.p_filesz, 0x4000)});
    }
    if (ph.p_type == PT_DYNAMIC) {
      l.dynamic_phdr = at;
      l.dynamic = ph.p_offset;
      l.dynamic_size = ph.p_filesz;
    }
  }
  l.regions.push_back({0, l.eh.e_phoff + l.eh.e_phnum * sizeof(Elf64_Phdr)});
  l.regions.push_back({l.eh.e_shoff, uint64_t{l.eh.e_shnum} * sizeof(Elf64_Shdr)});
  for (uint64_t i = 0; i < l.eh.e_shnum; ++i) {
    auto sh = get<Elf64_Shdr>(bytes, l.eh.e_shoff + i * sizeof(Elf64_Shdr));
    if (sh.sh_type != SHT_RELA) continue;
    for (uint64_t at = sh.sh_offset; at + sizeof(Elf64_Rela) <= sh.sh_offset + sh.sh_size; at += sizeof(Elf64_Rela))
      l.meaning.push_back({at + offsetof(Elf64_Rela, r_info) + 4, 12});  // symbol index and addend
  }
  return l;
}

// File offset of a dynamic entry's value, or 0 when the tag is absent.
uint64_t dynamic_value_at(const std::string& bytes, const Layout& l, int64_t tag) {
  for (uint64_t at = l.dynamic; at < l.dynamic + l.dynamic_size; at += sizeof(Elf64_Dyn))
    if (get<Elf64_Dyn>(bytes, at).d_tag == tag) return at + 8;
  return 0;
}

uint64_t to_file(const std::string& bytes, const Layout& l, uint64_t vaddr) {
  for (uint64_t at : l.loads) {
    auto ph = get<Elf64_Phdr>(bytes, at);
    if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) return ph.p_offset + (vaddr - ph.p_vaddr);
  }
  ADD_FAILURE() << "address " << vaddr << " is not in the file";
  return 0;
}

struct ChildResult {
  bool clean = false;   // the child ended normally
  std::string outcome;  // "loaded", "error: <message>", or how the child died
};

// Loads (and unloads) `path` in a forked child and reports what happened.
ChildResult load_in_child(const std::string& path) {
  int fds[2];
  if (pipe(fds) != 0) return {false, "pipe failed"};
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    alarm(20);  // a loader stuck in a loop counts as a failure too
    std::string msg = "loaded";
    try {
      Module m = Module::load_from_file(path);
      m.node()->list_functions();
    } catch (const Error& e) {
      msg = std::string("error: ") + e.what();
    } catch (...) {
      msg = "unexpected exception";
    }
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return {false, "killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")"};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {false, "exited with status " + std::to_string(WEXITSTATUS(status)) + " (the dynamic loader aborted)"};
  return {true, out};
}

class ElfCorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    register_runtime_functions();
    original_ = read_bytes(ANVIL_TEST_KERNELS);
    ASSERT_GT(original_.size(), sizeof(Elf64_Ehdr));
    layout_ = parse(original_);
    path_ = (std::filesystem::temp_directory_path() / ("anvil_elf_corrupt_" + std::to_string(getpid()) + ".so")).string();
  }
  void TearDown() override { std::filesystem::remove(path_); }

  ChildResult load(const std::string& bytes) {
    std::ofstream(path_, std::ios::binary | std::ios::trunc) << bytes;
    return load_in_child(path_);
  }

  // The corrupted copy must be refused with an IOError saying what is wrong.
  void expect_refused(const std::string& label, const std::function<void(std::string&)>& corrupt) {
    std::string bytes = original_;
    corrupt(bytes);
    ASSERT_NE(bytes, original_) << label;
    ChildResult r = load(bytes);
    EXPECT_TRUE(r.clean) << label << ": " << r.outcome;
    EXPECT_NE(r.outcome.find("is not a loadable shared library"), std::string::npos) << label << ": " << r.outcome;
  }

  std::string original_;
  Layout layout_;
  std::string path_;
};

TEST_F(ElfCorruptionTest, TheUncorruptedCopyLoads) {
  ChildResult r = load(original_);
  EXPECT_TRUE(r.clean) << r.outcome;
  EXPECT_EQ(r.outcome, "loaded");
}

TEST_F(ElfCorruptionTest, LoadSegmentFieldsAreChecked) {
  for (size_t i = 0; i < layout_.loads.size(); ++i) {
    uint64_t ph = layout_.loads[i];
    auto phdr = get<Elf64_Phdr>(original_, ph);
    std::string which = "PT_LOAD " + std::to_string(i);
    // A memory size below the file size (its top bit cleared), a file size and an offset past
    // the end of the file.
    uint64_t top = uint64_t{1} << (63 - __builtin_clzll(phdr.p_memsz));
    expect_refused(which + " p_memsz", [&](std::string& b) { put<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_memsz), phdr.p_memsz ^ top); });
    expect_refused(which + " p_filesz", [&](std::string& b) {
      put<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_filesz), phdr.p_filesz ^ (uint64_t{1} << 40));
    });
    expect_refused(which + " p_offset", [&](std::string& b) {
      put<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_offset), phdr.p_offset ^ (uint64_t{1} << 40));
    });
    expect_refused(which + " p_vaddr", [&](std::string& b) {
      put<uint64_t>(b, ph + offsetof(Elf64_Phdr, p_vaddr), phdr.p_vaddr ^ (uint64_t{1} << 44));
    });
  }
  // The first segment moved by one page in the file: what would be mapped is the wrong bytes.
  uint64_t first = layout_.loads[0];
  expect_refused("PT_LOAD 0 p_offset + one page", [&](std::string& b) {
    put<uint64_t>(b, first + offsetof(Elf64_Phdr, p_offset), get<uint64_t>(b, first + offsetof(Elf64_Phdr, p_offset)) ^ 0x1000);
  });
}

TEST_F(ElfCorruptionTest, DynamicSegmentIsChecked) {
  uint64_t ph = layout_.dynamic_phdr;
  ASSERT_NE(ph, 0u);
  for (auto [field, bit] : {std::pair{offsetof(Elf64_Phdr, p_offset), 3}, {offsetof(Elf64_Phdr, p_offset), 40},
                            {offsetof(Elf64_Phdr, p_vaddr), 12}, {offsetof(Elf64_Phdr, p_vaddr), 40},
                            {offsetof(Elf64_Phdr, p_filesz), 40}, {offsetof(Elf64_Phdr, p_memsz), 2}}) {
    uint64_t at = ph + field, mask = uint64_t{1} << bit;  // (clang 14 cannot capture bindings)
    expect_refused("PT_DYNAMIC field at " + std::to_string(field) + " bit " + std::to_string(bit),
                   [at, mask](std::string& b) { put<uint64_t>(b, at, get<uint64_t>(b, at) ^ mask); });
  }
  // No end marker: every DT_NULL turned into DT_DEBUG.
  expect_refused("dynamic table without DT_NULL", [&](std::string& b) {
    for (uint64_t at = layout_.dynamic; at < layout_.dynamic + layout_.dynamic_size; at += sizeof(Elf64_Dyn))
      if (get<int64_t>(b, at) == DT_NULL) put<int64_t>(b, at, DT_DEBUG);
  });
}

TEST_F(ElfCorruptionTest, RelocationTablesAreChecked) {
  uint64_t rela = dynamic_value_at(original_, layout_, DT_RELA);
  uint64_t relasz = dynamic_value_at(original_, layout_, DT_RELASZ);
  ASSERT_NE(rela, 0u);
  ASSERT_NE(relasz, 0u);
  auto flip = [](uint64_t at, int bit) {
    return [at, bit](std::string& b) { put<uint64_t>(b, at, get<uint64_t>(b, at) ^ (uint64_t{1} << bit)); };
  };
  expect_refused("DT_RELA address", flip(rela, 40));
  expect_refused("DT_RELASZ bit 40", flip(relasz, 40));
  expect_refused("DT_RELASZ bit 3 (not whole entries)", flip(relasz, 3));
  expect_refused("DT_RELASZ bit 12 (past the table)", flip(relasz, 12));
  if (uint64_t relaent = dynamic_value_at(original_, layout_, DT_RELAENT)) expect_refused("DT_RELAENT", flip(relaent, 3));
  if (uint64_t count = dynamic_value_at(original_, layout_, DT_RELACOUNT)) expect_refused("DT_RELACOUNT", flip(count, 5));
  if (uint64_t jmprel = dynamic_value_at(original_, layout_, DT_JMPREL)) expect_refused("DT_JMPREL", flip(jmprel, 40));
  if (uint64_t pltrel = dynamic_value_at(original_, layout_, DT_PLTREL)) expect_refused("DT_PLTREL", flip(pltrel, 0));
  // Each entry of .rela.dyn: its target far outside the image, its symbol out of range.
  uint64_t table = to_file(original_, layout_, get<uint64_t>(original_, rela));
  uint64_t entries = get<uint64_t>(original_, relasz) / sizeof(Elf64_Rela);
  ASSERT_GT(entries, 0u);
  for (uint64_t i = 0; i < entries; ++i) {
    uint64_t at = table + i * sizeof(Elf64_Rela);
    expect_refused("relocation " + std::to_string(i) + " r_offset bit 30", flip(at + offsetof(Elf64_Rela, r_offset), 30));
    expect_refused("relocation " + std::to_string(i) + " r_info symbol", flip(at + offsetof(Elf64_Rela, r_info), 60));
  }
}

TEST_F(ElfCorruptionTest, OtherDynamicPointersAreChecked) {
  auto flip = [](uint64_t at, int bit) {
    return [at, bit](std::string& b) { put<uint64_t>(b, at, get<uint64_t>(b, at) ^ (uint64_t{1} << bit)); };
  };
  for (auto [tag, name] : {std::pair{int64_t{DT_STRTAB}, "DT_STRTAB"}, {DT_SYMTAB, "DT_SYMTAB"}, {DT_STRSZ, "DT_STRSZ"},
                           {DT_GNU_HASH, "DT_GNU_HASH"}, {DT_HASH, "DT_HASH"}, {DT_VERSYM, "DT_VERSYM"},
                           {DT_VERNEED, "DT_VERNEED"}, {DT_INIT_ARRAY, "DT_INIT_ARRAY"}, {DT_FINI_ARRAY, "DT_FINI_ARRAY"},
                           {DT_INIT_ARRAYSZ, "DT_INIT_ARRAYSZ"}, {DT_INIT, "DT_INIT"}, {DT_FINI, "DT_FINI"}}) {
    if (uint64_t at = dynamic_value_at(original_, layout_, tag)) {
      expect_refused(std::string(name) + " bit 40", flip(at, 40));
      // An entry point moved inside the code; an array grown past its relocated entries.
      if (tag == DT_INIT || tag == DT_FINI) expect_refused(std::string(name) + " bit 3", flip(at, 3));
      if (tag == DT_INIT_ARRAYSZ) expect_refused(std::string(name) + " bit 4", flip(at, 4));
    }
  }
}

// Random single-bit flips anywhere in the headers and tables the loader reads (not in code or
// data): every one must load or be refused, never crash or abort the process.
TEST_F(ElfCorruptionTest, RandomBitFlipsNeverCrashTheLoader) {
  const char* env = std::getenv("ANVIL_TEST_SEED");
  uint64_t seed = env ? std::strtoull(env, nullptr, 10) : 20240611;
  std::printf("random bit-flip seed: %llu (set ANVIL_TEST_SEED to change it)\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  uint64_t total_bits = 0;
  for (auto [off, size] : layout_.regions) total_bits += size * 8;
  int refused = 0, loaded = 0;
  std::vector<std::string> failures;
  constexpr int kFlips = 800;
  for (int k = 0; k < kFlips && failures.size() < 10; ++k) {
    uint64_t bit = 0, offset = 0;
    do {
      bit = rng() % total_bits;
      for (auto [off, size] : layout_.regions) {
        if (bit < size * 8) {
          offset = off + bit / 8;
          break;
        }
        bit -= size * 8;
      }
    } while (layout_.is_meaning(offset));
    std::string bytes = original_;
    bytes[offset] = static_cast<char>(bytes[offset] ^ (1 << (bit % 8)));
    ChildResult r = load(bytes);
    if (!r.clean) {
      char where[64];
      std::snprintf(where, sizeof where, "byte 0x%llx bit %llu: ", static_cast<unsigned long long>(offset),
                    static_cast<unsigned long long>(bit % 8));
      failures.push_back(where + r.outcome);
    } else if (r.outcome == "loaded") {
      ++loaded;
    } else {
      ++refused;
    }
  }
  std::printf("%d flips refused with an error, %d loaded (harmless bits)\n", refused, loaded);
  for (const std::string& f : failures) ADD_FAILURE() << "crash on a flipped bit at " << f;
}

}  // namespace
}  // namespace anvil
