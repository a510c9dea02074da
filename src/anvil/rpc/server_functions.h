// The global functions a TVM RPC client expects from a server (spec §3.2, §3.6), bound to one
// session's work directory: tvm.rpc.server.{workpath, upload, download, remove, listdir,
// load_module, download_linked_module, ModuleGetFunction, ImportModule, GetCRTMaxPacketSize},
// runtime.load_module, runtime.RPCTimeEvaluator, ffi.SystemLib, and TVM's rpc.test.* helpers.
//
// Unlike TVM, file operations are confined to the work directory: absolute paths outside it,
// ".." components, symbolic links that lead out and names with NUL or other control characters
// are refused with a ValueError. runtime.load_module is overridden with the same confinement, and
// every file handed to the linker is checked to be an object file or an archive of them
// (link_inputs.h), so no linker script can pull an outside file into a downloaded library.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "anvil/rpc/local_session.h"

namespace anvil::rpc {

// The session functions for `work_dir`, by name (an in-process session's overlay).
// GetCRTMaxPacketSize advertises `max_packet_bytes`, so TVM clients chunk copies to fit it.
SessionFunctions server_functions(const std::filesystem::path& work_dir, uint64_t max_packet_bytes);

// Registers (overriding earlier registrations) the session functions for `work_dir`.
// GetCRTMaxPacketSize advertises `max_packet_bytes`, so TVM clients chunk copies to fit it.
void register_server_functions(const std::filesystem::path& work_dir, uint64_t max_packet_bytes);

// The rpc.test.*, rpc.testing.* and testing.* helpers TVM's own RPC tests call (test_functions.cc).
void register_test_functions();

// The file `name` names inside work_dir, with every symbolic link resolved. ValueError when it
// is empty, holds a control character or "..", or resolves outside work_dir (an absolute path
// outside is refused before the file system is consulted).
std::filesystem::path resolve_in_workdir(const std::filesystem::path& work_dir, const std::string& name);

// Links object files into a shared library with the system compiler driver ($CXX or "c++"),
// without a shell. IOError carrying the exit status when it fails.
void link_shared_library(const std::filesystem::path& output, const std::vector<std::filesystem::path>& inputs);

}  // namespace anvil::rpc
