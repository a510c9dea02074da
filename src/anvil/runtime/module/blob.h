// The blob embedded in a kernel library: the library's module tree, serialised. It holds every
// non-host module (VM executable, device kernels, params) and the import edges between them;
// the host code itself appears as a "_lib" placeholder that the loader replaces with the library.
// Layout (docs/abi.md has the table): magic "ANVLBLOB", u32 version, u32 flags, u64 payload size,
// u32 CRC-32 of the payload, u32 reserved, then the payload:
//   u64 module count; per module: string kind, and unless kind == "_lib" a payload: u64 length,
//   zero bytes up to the next multiple of 64 from the blob's start, the bytes;
//   u64 child count per module (num_modules of them); then the child indices.
// Strings are u64 length + bytes; all integers little-endian. Module 0 is the root. Version 2
// aligned the payloads, so that a module loaded in place from the (64-byte aligned) blob can
// align its own contents: a VM executable's tensor constants are used where they lie.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "anvil/runtime/module/module.h"

namespace anvil {

inline constexpr char kBlobMagic[8] = {'A', 'N', 'V', 'L', 'B', 'L', 'O', 'B'};
inline constexpr uint32_t kBlobVersion = 2;
// Payloads start at a multiple of this from the blob start.
inline constexpr size_t kBlobPayloadAlignment = 64;
inline constexpr std::string_view kHostLibraryKind = "_lib";

// Serialises the tree under root. Modules for which is_host(m) is true become "_lib" (they are
// the shared library's own code); all others must be binary-serialisable. Throws ValueError if
// a module cannot be serialised.
std::string pack_module_tree(const Module& root, bool (*is_host)(const Module&));

// Rebuilds a tree from a blob; "_lib" entries become host_library. Validates magic, version,
// checksum, every length and index, and rejects cycles; errors are ValueErrors naming the field.
// `backing` (see Module::load_from_bytes) owns the blob's memory when the modules may keep
// views of it — a loaded library's blob; without it the modules copy what they keep.
Module unpack_module_tree(std::string_view blob, const Module& host_library,
                          const std::shared_ptr<void>& backing = nullptr);

uint32_t crc32(std::string_view data);

}  // namespace anvil
