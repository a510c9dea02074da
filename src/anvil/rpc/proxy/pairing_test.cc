// Pairing rules of both proxy modes, without sockets.
#include "anvil/rpc/proxy/pairing.h"

#include <gtest/gtest.h>

namespace anvil::rpc::proxy {
namespace {

using D = PairingTable::Decision;

TEST(ProxyPairing, PlainModePairsEitherOrder) {
  PairingTable t(false, 1);
  EXPECT_EQ(t.arrive(1, Role::kServer, "k").kind, D::kWait);
  D d = t.arrive(2, Role::kClient, "k");
  EXPECT_EQ(d.kind, D::kPair);
  EXPECT_EQ(d.partner, 1u);
  EXPECT_FALSE(t.waiting(1));
  EXPECT_EQ(t.arrive(3, Role::kClient, "j").kind, D::kWait);
  d = t.arrive(4, Role::kServer, "j");
  EXPECT_EQ(d.kind, D::kPair);
  EXPECT_EQ(d.partner, 3u);
  EXPECT_EQ(t.waiting_count(Role::kServer) + t.waiting_count(Role::kClient), 0u);
}

TEST(ProxyPairing, PlainModeSameRoleSameKeyIsDuplicate) {
  PairingTable t(false, 1);
  EXPECT_EQ(t.arrive(1, Role::kServer, "k").kind, D::kWait);
  EXPECT_EQ(t.arrive(2, Role::kServer, "k").kind, D::kDuplicate);
  EXPECT_FALSE(t.waiting(2));
  // Once the first leaves, the key is free again.
  EXPECT_TRUE(t.remove(1));
  EXPECT_FALSE(t.remove(1));
  EXPECT_EQ(t.arrive(3, Role::kServer, "k").kind, D::kWait);
}

TEST(ProxyPairing, PlainModeDifferentKeysDoNotPair) {
  PairingTable t(false, 1);
  EXPECT_EQ(t.arrive(1, Role::kServer, "a").kind, D::kWait);
  EXPECT_EQ(t.arrive(2, Role::kClient, "b").kind, D::kWait);
}

TEST(ProxyPairing, TrackerModeRegistersServersUnderFreshKeys) {
  PairingTable t(true, 7);
  D s1 = t.arrive(1, Role::kServer, "rk");
  D s2 = t.arrive(2, Role::kServer, "rk");
  EXPECT_EQ(s1.kind, D::kWait);
  EXPECT_EQ(s2.kind, D::kWait);  // no duplicate in tracker mode: each gets its own key
  EXPECT_NE(s1.waiting_key, s2.waiting_key);
  EXPECT_EQ(PairingTable::device_key_of(s1.waiting_key), "rk");
  EXPECT_EQ(t.arrive(3, Role::kClient, "rk").kind, D::kMismatch);  // the device key alone is not enough
  D c = t.arrive(4, Role::kClient, s2.waiting_key);
  EXPECT_EQ(c.kind, D::kPair);
  EXPECT_EQ(c.partner, 2u);
  EXPECT_EQ(t.arrive(5, Role::kClient, s2.waiting_key).kind, D::kMismatch);  // taken
}

TEST(ProxyPairing, RekeyMovesAWaitingServer) {
  PairingTable t(true, 7);
  std::string k = t.arrive(1, Role::kServer, "a:b").waiting_key;
  EXPECT_EQ(PairingTable::device_key_of(k), "a:b");
  std::string k2 = t.rekey_server(k);
  EXPECT_NE(k, k2);
  EXPECT_EQ(t.server_key_of(1), k2);
  EXPECT_EQ(t.arrive(2, Role::kClient, k).kind, D::kMismatch);
  EXPECT_EQ(t.arrive(3, Role::kClient, k2).kind, D::kPair);
}

}  // namespace
}  // namespace anvil::rpc::proxy
