// A client request as the server decodes it (spec §2.6): one packet body in, one Request out,
// checked strictly against Limits. Kept apart from the serving loop so that the fuzzer can
// drive exactly the decoder the server uses.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "anvil/rpc/protocol.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {

struct Request {
  int32_t code = 0;
  std::string version;          // kInitServer
  uint64_t handle = 0;          // kCallFunc
  std::vector<WireValue> args;  // kInitServer, kCallFunc, syscalls
  WireTensor tensor;            // copies
  uint64_t nbytes = 0;          // kCopyFromRemote
  std::string_view data;        // kCopyToRemote: points into the packet body
};

// ProtocolError for anything a client may not send: server-to-client codes, unknown codes,
// malformed or truncated bodies, trailing bytes. `body` must outlive the Request.
Request decode_request(std::string_view body, const Limits& limits);

}  // namespace anvil::rpc
