// Incremental parser of the proxy's side of TVM's data-plane handshake (spec §1.2, §5): the
// magic, the key length and the key, from bytes as they arrive. No sockets: the proxy feeds it
// what each read returns, and the fuzzer and unit tests feed it anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anvil::rpc::proxy {

enum class Role { kServer, kClient };

class HandshakeParser {
 public:
  enum class State { kNeedMore, kDone, kError };

  explicit HandshakeParser(uint32_t max_key_bytes) : max_key_bytes_(max_key_bytes) {}

  // Consumes bytes; returns the new state. After kDone, bytes past the key are an error ("too
  // many bytes": a peer must wait for the proxy's answer before sending more, as TVM's proxy
  // insists). After kError, further input is ignored.
  State feed(std::string_view bytes);

  State state() const { return state_; }
  // Valid in kDone.
  Role role() const { return role_; }
  const std::string& key() const { return key_; }            // the whole key: "client:k -timeout=10"
  const std::string& match_key() const { return match_key_; }  // its first token without the prefix: "k"
  // Valid in kError: what was wrong, for the log.
  const std::string& error() const { return error_; }

 private:
  State fail(std::string message);
  State finish();

  uint32_t max_key_bytes_;
  State state_ = State::kNeedMore;
  unsigned char header_[8] = {};
  size_t header_len_ = 0;
  int32_t key_len_ = -1;
  std::string key_;
  std::string match_key_;
  Role role_ = Role::kClient;
  std::string error_;
};

}  // namespace anvil::rpc::proxy
