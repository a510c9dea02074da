// Strict decoding of client requests (see request.h).
#include "anvil/rpc/request.h"

namespace anvil::rpc {

Request decode_request(std::string_view body, const Limits& limits) {
  Reader r(body, "request");
  Request q;
  q.code = r.i32("code");
  switch (static_cast<RPCCode>(q.code)) {
    case RPCCode::kShutdown:
      break;
    case RPCCode::kInitServer:
      q.version = std::string(r.str("protocol_version"));
      q.args = read_seq(r, limits);
      break;
    case RPCCode::kCallFunc:
      q.handle = r.u64("function_handle");
      q.args = read_seq(r, limits);
      break;
    case RPCCode::kCopyToRemote:
      q.tensor = read_tensor(r, limits);
      q.data = r.str("copy_data");
      break;
    case RPCCode::kCopyFromRemote:
      q.tensor = read_tensor(r, limits);
      q.nbytes = r.u64("copy_nbytes");
      break;
    default:
      if (q.code < kSyscallCodeStart || q.code > kSyscallCodeEnd) {
        r.fail(str_cat("unexpected packet code ", rpc_code_name(q.code), " from a client"));
      }
      q.args = read_seq(r, limits);
      break;
  }
  r.expect_end();
  return q;
}

}  // namespace anvil::rpc
