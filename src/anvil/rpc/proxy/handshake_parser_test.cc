// The proxy's handshake parser fed whole, byte by byte, and with every kind of bad input.
#include "anvil/rpc/proxy/handshake_parser.h"

#include <gtest/gtest.h>

#include "anvil/rpc/protocol.h"

namespace anvil::rpc::proxy {
namespace {

using State = HandshakeParser::State;

std::string i32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }
std::string hello(const std::string& key) { return i32(kRPCMagic) + i32(static_cast<int32_t>(key.size())) + key; }

TEST(ProxyHandshakeParser, ParsesClientAndServerKeys) {
  HandshakeParser c(4096);
  EXPECT_EQ(c.feed(hello("client:rk3588 -timeout=10")), State::kDone);
  EXPECT_EQ(c.role(), Role::kClient);
  EXPECT_EQ(c.key(), "client:rk3588 -timeout=10");
  EXPECT_EQ(c.match_key(), "rk3588");
  HandshakeParser s(4096);
  EXPECT_EQ(s.feed(hello("server:rk3588")), State::kDone);
  EXPECT_EQ(s.role(), Role::kServer);
  EXPECT_EQ(s.match_key(), "rk3588");
}

TEST(ProxyHandshakeParser, AcceptsOneByteAtATime) {
  std::string bytes = hello("server:k:0.5 -auth-nonce=ab");
  HandshakeParser p(4096);
  for (size_t i = 0; i + 1 < bytes.size(); ++i) EXPECT_EQ(p.feed(bytes.substr(i, 1)), State::kNeedMore) << i;
  EXPECT_EQ(p.feed(bytes.substr(bytes.size() - 1)), State::kDone);
  EXPECT_EQ(p.match_key(), "k:0.5");
}

TEST(ProxyHandshakeParser, EmptyDeviceKeyIsAllowed) {
  HandshakeParser p(4096);
  EXPECT_EQ(p.feed(hello("client:")), State::kDone);
  EXPECT_EQ(p.match_key(), "");
}

TEST(ProxyHandshakeParser, RefusesBadMagicAtTheFourthByte) {
  HandshakeParser p(4096);
  EXPECT_EQ(p.feed("GET "), State::kError);
  EXPECT_NE(p.error().find("bad magic"), std::string::npos);
  EXPECT_EQ(p.feed(hello("client:x")), State::kError);  // stays failed
}

TEST(ProxyHandshakeParser, RefusesNegativeAndOversizedKeyLengths) {
  HandshakeParser neg(4096);
  EXPECT_EQ(neg.feed(i32(kRPCMagic) + i32(-1)), State::kError);
  HandshakeParser big(16);
  EXPECT_EQ(big.feed(i32(kRPCMagic) + i32(17)), State::kError);
  EXPECT_NE(big.error().find("key length 17"), std::string::npos) << big.error();
  HandshakeParser huge(4096);
  EXPECT_EQ(huge.feed(i32(kRPCMagic) + i32(0x7fffffff)), State::kError);
}

TEST(ProxyHandshakeParser, RefusesKeysWithoutARole) {
  HandshakeParser p(4096);
  EXPECT_EQ(p.feed(hello("x1")), State::kError);
  EXPECT_NE(p.error().find("neither"), std::string::npos);
  HandshakeParser empty(4096);
  EXPECT_EQ(empty.feed(hello("")), State::kError);
}

TEST(ProxyHandshakeParser, BytesPastTheKeyAreTooMany) {
  HandshakeParser p(4096);
  EXPECT_EQ(p.feed(hello("client:k") + "x"), State::kError);
  EXPECT_NE(p.error().find("too many bytes"), std::string::npos) << p.error();
  HandshakeParser q(4096);
  EXPECT_EQ(q.feed(hello("client:k")), State::kDone);
  EXPECT_EQ(q.feed("more"), State::kError);
}

TEST(ProxyHandshakeParser, TruncatedInputWaitsForMore) {
  HandshakeParser p(4096);
  EXPECT_EQ(p.feed(hello("client:abc").substr(0, 9)), State::kNeedMore);
}

}  // namespace
}  // namespace anvil::rpc::proxy
