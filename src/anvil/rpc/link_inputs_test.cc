// The linker-input checks on real objects and archives made by the system's cc, ar and objcopy,
// and on the hostile inputs they must refuse: linker scripts, other ELF kinds and machines,
// truncated files, thin archives, bad members, LTO IR, dependent-library and debug-link sections.
#include "anvil/rpc/link_inputs.h"

#include <elf.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "anvil/base/error.h"

namespace anvil::rpc {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_all(const fs::path& p, const std::string& data) { std::ofstream(p, std::ios::binary) << data; }

// The message of the ValueError check_link_input throws, or "" when it accepts.
std::string refusal(const std::string& bytes) {
  try {
    check_link_input(bytes, "'x.o'");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue) << e.what();
    return e.what();
  }
  return "";
}

class LinkInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/anvil-link-inputs-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
    run("cc -c -fPIC -I" ANVIL_SOURCE_DIR "/src " ANVIL_SOURCE_DIR "/tests/data/test_kernels.c -o k.o");
    object_ = read_all(dir_ / "k.o");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void run(const std::string& command) {
    std::string line = "cd " + dir_.string() + " && " + command;
    ASSERT_EQ(std::system(line.c_str()), 0) << line;
  }
  fs::path dir_;
  std::string object_;
};

TEST_F(LinkInputs, ObjectsAndArchivesOfThemAreAccepted) {
  EXPECT_EQ(refusal(object_), "");
  EXPECT_NO_THROW(check_link_input_file(dir_ / "k.o", "'k.o'"));
  // A member name longer than 15 bytes goes through GNU ar's long-name table.
  run("cp k.o a_rather_long_member_name.o && ar rcs k.a k.o a_rather_long_member_name.o");
  EXPECT_EQ(refusal(read_all(dir_ / "k.a")), "");
  EXPECT_EQ(refusal("!<arch>\n"), "");  // an empty archive links nothing
}

TEST_F(LinkInputs, LinkerScriptsAreRefused) {
  for (std::string script : {"INPUT(/etc/passwd)\n", "TARGET(binary)\nINPUT(/etc/hostname)\n", "/* GNU ld script */ GROUP(/lib/x)"}) {
    std::string why = refusal(script);
    EXPECT_NE(why.find("'x.o' is not accepted as linker input: it is text, not an object file"), std::string::npos) << why;
  }
  EXPECT_NE(refusal(std::string("\0\1\2\3", 4)).find("ELF magic"), std::string::npos);
  EXPECT_NE(refusal("").find("ELF magic"), std::string::npos);
  EXPECT_NE(refusal("\x7f" "ELF").find("too few for an ELF header"), std::string::npos);
}

TEST_F(LinkInputs, OtherElfKindsMachinesAndDamageAreRefused) {
  EXPECT_NE(refusal(read_all(ANVIL_TEST_KERNELS)).find("ELF type is 3 (a shared library or PIE), not ET_REL"), std::string::npos);
  std::string other = object_;
  uint16_t machine = EM_RISCV;
  std::memcpy(other.data() + offsetof(Elf64_Ehdr, e_machine), &machine, 2);
  EXPECT_NE(refusal(other).find("(ELF machine 243)"), std::string::npos) << refusal(other);
  other = object_;
  other[EI_CLASS] = ELFCLASS32;
  EXPECT_NE(refusal(other).find("not a 64-bit ELF file"), std::string::npos);
  other = object_;
  other[EI_DATA] = ELFDATA2MSB;
  EXPECT_NE(refusal(other).find("not a little-endian"), std::string::npos);
  // Truncated: the section header table sits at the end of cc's objects.
  EXPECT_NE(refusal(object_.substr(0, object_.size() - 8)).find("lies outside the file"), std::string::npos);
  // A section whose data runs past the end of the file.
  Elf64_Ehdr eh;
  std::memcpy(&eh, object_.data(), sizeof(eh));
  other = object_;
  Elf64_Shdr sh;
  size_t at = eh.e_shoff + sizeof(Elf64_Shdr);  // section 1 (.text)
  std::memcpy(&sh, other.data() + at, sizeof(sh));
  sh.sh_size = other.size();
  std::memcpy(other.data() + at, &sh, sizeof(sh));
  EXPECT_NE(refusal(other).find("section 1 lies outside the file"), std::string::npos) << refusal(other);
}

TEST_F(LinkInputs, ThinArchivesAndBadMembersAreRefused) {
  write_all(dir_ / "script.o", "INPUT(/etc/passwd)\n");
  run("ar rcs bad.a k.o script.o && ar rcsT thin.a k.o");
  std::string why = refusal(read_all(dir_ / "bad.a"));
  EXPECT_NE(why.find("'x.o' (archive member 3) is not accepted as linker input: it is text"), std::string::npos) << why;
  EXPECT_NE(refusal(read_all(dir_ / "thin.a")).find("thin archive"), std::string::npos);
  run("ar rcS plain.a k.o");  // no symbol index: the first member is the object
  std::string archive = read_all(dir_ / "plain.a");
  EXPECT_EQ(refusal(archive), "");
  EXPECT_NE(refusal(archive.substr(0, archive.size() - 100)).find("extends past the end of the archive"), std::string::npos);
  std::string bad_size = archive;
  bad_size.replace(8 + 48, 10, "12x       ");
  EXPECT_NE(refusal(bad_size).find("size field is not a decimal number"), std::string::npos);
}

TEST_F(LinkInputs, SectionsThatMakeTheLinkerReadOtherFilesAreRefused) {
  write_all(dir_ / "debug", "x");
  write_all(dir_ / "libs", std::string("/etc/passwd\0", 12));
  run("objcopy --add-gnu-debuglink=debug k.o debuglink.o && objcopy --add-section .deplibs=libs k.o deplibs.o");
  EXPECT_NE(refusal(read_all(dir_ / "debuglink.o")).find("section '.gnu_debuglink'"), std::string::npos);
  EXPECT_NE(refusal(read_all(dir_ / "deplibs.o")).find("section '.deplibs' carries dependent libraries"), std::string::npos);
  run("cc -c -flto -fPIC -I" ANVIL_SOURCE_DIR "/src " ANVIL_SOURCE_DIR "/tests/data/test_kernels.c -o lto.o");
  std::string why = refusal(read_all(dir_ / "lto.o"));
  EXPECT_NE(why.find("section '.gnu.lto_"), std::string::npos) << why;
}

TEST_F(LinkInputs, FilesMustBeRegularAndNotLinks) {
  fs::create_symlink(dir_ / "k.o", dir_ / "link.o");
  EXPECT_THROW(check_link_input_file(dir_ / "link.o", "'link.o'"), Error);
  EXPECT_THROW(check_link_input_file(dir_, "'dir'"), Error);
  EXPECT_THROW(check_link_input_file(dir_ / "missing.o", "'missing.o'"), Error);
}

}  // namespace
}  // namespace anvil::rpc
