// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), small and dependency-free, for the RPC
// auth-token challenge-response (auth.h). Not a general crypto library: no streaming API beyond
// what HMAC needs, no other hashes. Also a constant-time comparison for digests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace anvil::rpc {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  void update(const void* data, size_t n);
  void update(std::string_view s) { update(s.data(), s.size()); }
  Sha256Digest finish();  // the object must not be used afterwards

 private:
  void block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;  // bytes hashed
};

Sha256Digest sha256(std::string_view data);
Sha256Digest hmac_sha256(std::string_view key, std::string_view message);

// True when a and b are equal; the time taken depends on the length only, not the contents.
bool constant_time_equal(std::string_view a, std::string_view b);

// Lower-case hex of bytes, and back (nullopt-free: returns false on a malformed string).
std::string to_hex(std::string_view bytes);
bool from_hex(std::string_view hex, std::string* out);

inline std::string_view digest_view(const Sha256Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

}  // namespace anvil::rpc
