// The proxy's handshake parser (see handshake_parser.h).
#include "anvil/rpc/proxy/handshake_parser.h"

#include <cstring>
#include <sstream>

#include "anvil/base/error.h"
#include "anvil/rpc/protocol.h"

namespace anvil::rpc::proxy {

HandshakeParser::State HandshakeParser::fail(std::string message) {
  state_ = State::kError;
  error_ = std::move(message);
  return state_;
}

HandshakeParser::State HandshakeParser::feed(std::string_view bytes) {
  if (state_ == State::kError) return state_;
  if (state_ == State::kDone) {
    if (bytes.empty()) return state_;
    return fail(str_cat("Invalid RPC protocol, too many bytes: ", bytes.size(),
                        " bytes before the proxy answered the handshake"));
  }
  while (!bytes.empty()) {
    if (header_len_ < 8) {
      size_t take = std::min(bytes.size(), 8 - header_len_);
      std::memcpy(header_ + header_len_, bytes.data(), take);
      header_len_ += take;
      bytes.remove_prefix(take);
      if (header_len_ >= 4 && header_len_ - take < 4) {
        int32_t magic;
        std::memcpy(&magic, header_, 4);
        if (magic != kRPCMagic) return fail(str_cat("bad magic 0x", std::hex, magic, " (not a TVM RPC peer)"));
      }
      if (header_len_ < 8) continue;
      std::memcpy(&key_len_, header_ + 4, 4);
      if (key_len_ < 0 || static_cast<uint32_t>(key_len_) > max_key_bytes_) {
        return fail(str_cat("key length ", key_len_, " outside [0, ", max_key_bytes_, "]"));
      }
      if (key_len_ == 0) return finish();
      continue;
    }
    size_t take = std::min(bytes.size(), static_cast<size_t>(key_len_) - key_.size());
    key_.append(bytes.data(), take);
    bytes.remove_prefix(take);
    if (key_.size() == static_cast<size_t>(key_len_)) {
      if (finish() != State::kDone) return state_;
      if (!bytes.empty()) return feed(bytes);
    }
  }
  return state_;
}

HandshakeParser::State HandshakeParser::finish() {
  constexpr std::string_view kServer = "server:", kClient = "client:";
  if (key_.starts_with(kServer)) {
    role_ = Role::kServer;
  } else if (key_.starts_with(kClient)) {
    role_ = Role::kClient;
  } else {
    std::string shown = key_.size() > 64 ? key_.substr(0, 64) + "..." : key_;
    return fail(str_cat("key '", shown, "' starts with neither 'client:' nor 'server:'"));
  }
  std::istringstream in(key_.substr(7));
  in >> match_key_;  // empty when the key is just "client:" (a server started without --key)
  state_ = State::kDone;
  return state_;
}

}  // namespace anvil::rpc::proxy
