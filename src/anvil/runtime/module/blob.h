// The blob embedded in a kernel library: the library's module tree, serialised. It holds every
// non-host module (VM executable, device kernels, params) and the import edges between them;
// the host code itself appears as a "_lib" placeholder that the loader replaces with the library.
// Layout (docs/abi.md has the table): magic "ANVLBLOB", u32 version, u32 flags, u64 payload size,
// u32 CRC-32 of the payload, u32 reserved, then the payload:
//   u64 module count; per module: string kind, and unless kind == "_lib" a string payload;
//   u64 child count per module (num_modules of them); then the child indices.
// Strings are u64 length + bytes; all integers little-endian. Module 0 is the root.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "anvil/runtime/module/module.h"

namespace anvil {

inline constexpr char kBlobMagic[8] = {'A', 'N', 'V', 'L', 'B', 'L', 'O', 'B'};
inline constexpr uint32_t kBlobVersion = 1;
inline constexpr std::string_view kHostLibraryKind = "_lib";

// Serialises the tree under root. Modules for which is_host(m) is true become "_lib" (they are
// the shared library's own code); all others must be binary-serialisable. Throws ValueError if
// a module cannot be serialised.
std::string pack_module_tree(const Module& root, bool (*is_host)(const Module&));

// Rebuilds a tree from a blob; "_lib" entries become host_library. Validates magic, version,
// checksum, every length and index, and rejects cycles; errors are ValueErrors naming the field.
Module unpack_module_tree(std::string_view blob, const Module& host_library);

uint32_t crc32(std::string_view data);

}  // namespace anvil
