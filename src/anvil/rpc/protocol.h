// Constants, codes, limits and error types of Apache TVM's RPC data plane, as Anvil speaks it
// (specs/tvm-rpc-protocol.md §1-2). Every other file of the RPC core includes this one; nothing
// here does I/O.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "anvil/base/error.h"
#include "anvil/rpc/tracker_codes.h"
#include "anvil/runtime/device.h"

namespace anvil::rpc {

// Handshake words (spec §1.1), little-endian i32 on the wire.
inline constexpr int32_t kRPCMagic = 0xFF271;
inline constexpr int32_t kRPCCodeSuccess = kRPCMagic + 0;
inline constexpr int32_t kRPCCodeDuplicate = kRPCMagic + 1;
inline constexpr int32_t kRPCCodeMismatch = kRPCMagic + 2;
// kRPCTrackerMagic: tracker_codes.h, with the tracker protocol's codes.
// The protocol version carried by kInitServer; unchanged from TVM v0.20 to HEAD.
inline constexpr std::string_view kProtocolVersion = "0.8.0";
// The largest device type a peer may name. DLDeviceType has no fixed underlying type, so only
// values within its enumerators' bit width are valid C++ values: [0, 15] for the DLPack header
// this builds against (largest enumerator 13), which covers every device Anvil serves.
inline constexpr int32_t kMaxDeviceType = kMaxDeviceTypeCode;  // runtime/device.h
// The prefix that makes a client raise RPCSessionTimeoutError instead of RPCError (spec §2.6.4).
inline constexpr std::string_view kSessionTimeoutPrefix = "RPCSessionTimeoutError: ";

enum class RPCCode : int32_t {
#define ANVIL_RPC_CODE(name, text, value) name = value,
#include "anvil/rpc/rpc_codes.def"
#undef ANVIL_RPC_CODE
};
// Codes at or above this are syscalls (spec §2.6.3).
inline constexpr int32_t kSyscallCodeStart = static_cast<int32_t>(RPCCode::kGetGlobalFunc);
inline constexpr int32_t kSyscallCodeEnd = static_cast<int32_t>(RPCCode::kDevGetCurrentStream);

enum class TypeIndex : int32_t {
#define ANVIL_RPC_TYPE_INDEX(name, text, value) name = value,
#include "anvil/rpc/type_indices.def"
#undef ANVIL_RPC_TYPE_INDEX
};

// "CallFunc", "DevAllocData", ...; "Unknown(<n>)" for a value outside the list.
std::string rpc_code_name(int32_t code);
// "Int", "RawStr", "RPCObjectRef", ...; "Unknown(<n>)" for a value outside the list.
std::string type_index_name(int32_t index);

// What one connection accepts from its peer. Every read is bounded in time and size by these;
// a peer that breaks a limit loses its connection (with a logged reason), nothing else.
struct Limits {
  uint64_t max_packet_bytes = uint64_t{1} << 30;  // one packet, length field included in the check
  uint32_t max_args = 1u << 16;                   // values in one PackedSeq
  int32_t max_ndim = 64;                          // dimensions of one tensor
  uint32_t max_key_bytes = 4096;                  // handshake key
  uint64_t max_alloc_bytes = uint64_t{64} << 30;  // one device allocation requested by the peer
  int handshake_timeout_ms = 10'000;              // the whole handshake
  int stall_timeout_ms = 60'000;                  // no byte arrives in the middle of a packet
  int idle_timeout_ms = 3'600'000;                // waiting for the next packet (request or reply)
};

// The peer broke the protocol: malformed, oversized or truncated input, an unknown code or type
// index. The connection that produced it is closed; the process carries on.
class ProtocolError : public Error {
 public:
  explicit ProtocolError(const std::string& message) : Error(ErrorKind::kValue, message) {}
};

// The byte stream failed: the peer closed mid-packet, a read timed out, a socket error.
class ChannelError : public Error {
 public:
  explicit ChannelError(const std::string& message) : Error(ErrorKind::kIO, message) {}
};

// An error raised by the remote side of a call and reported back with kException. The text is
// TVM's: "RPCError: Error caught from RPC call:\n" + the remote message. The kind is recovered
// from a "<Kind>: " prefix of the remote message (Anvil and TVM servers both write one), else
// kRuntime.
class RPCError : public Error {
 public:
  RPCError(ErrorKind kind, const std::string& message) : Error(kind, message) {}
};

// The server ended the session because its session_timeout expired (spec §3.4).
class RPCSessionTimeoutError : public RPCError {
 public:
  explicit RPCSessionTimeoutError(const std::string& message) : RPCError(ErrorKind::kRuntime, message) {}
};

// Throws the RPCError (or RPCSessionTimeoutError) that a kException text stands for.
[[noreturn]] void throw_remote_error(std::string_view remote_message);

// "ValueError: <what>" for an anvil::Error, "RuntimeError: <what>" for anything else: the text a
// server sends in kException so that the client can recover the kind.
std::string exception_text(const std::exception& e);

}  // namespace anvil::rpc
