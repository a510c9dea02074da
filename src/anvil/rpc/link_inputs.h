// The files an RPC server hands to the linker (download_linked_module, load_module of a .o or a
// .tar) must be what they claim. GNU ld reads any input that is not an object or an archive as a
// linker script, so an uploaded "x.o" holding `TARGET(binary) INPUT(/some/file)` would link any
// file the server can read into the library the client downloads; a thin archive names its
// members by path; an LTO object makes the linker run the compiler with options it carries; a
// .deplibs section (lld) names libraries to search for; a .gnu_debuglink makes the linker's
// diagnostics open a file by name. These checks accept only what a compiler's -c writes.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace anvil::rpc {

// ValueError naming `what` and the reason unless `bytes` is an ELF relocatable object (ET_REL)
// of this host (64-bit, little-endian, the host's machine) whose section table and sections lie
// inside it, with no section that makes a linker read other files or run a plugin (.gnu.lto_*,
// .llvm.lto, .deplibs and LLVM linker options, .gnu_debuglink, .gnu_debugaltlink).
void check_relocatable_object(std::string_view bytes, const std::string& what);

// Such an object, or an `ar` archive ("!<arch>\n"; thin archives refused) whose every member is
// one (its symbol index and long-name table aside).
void check_link_input(std::string_view bytes, const std::string& what);

// check_link_input on the file at `path`, which must be a regular file (a symbolic link is not
// followed). IOError when it cannot be read.
void check_link_input_file(const std::filesystem::path& path, const std::string& what);

}  // namespace anvil::rpc
