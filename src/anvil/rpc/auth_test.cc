// The auth-token challenge-response over a socketpair (auth.h): right token, wrong token, a
// client without a token, a TVM-style client that sends InitServer, a server that offers no
// authentication to a client with a token, a forged server proof, and the nonce option parser.
#include "anvil/rpc/auth.h"

#include <gtest/gtest.h>

#include <thread>

#include "anvil/rpc/endpoint.h"
#include "anvil/rpc/wire.h"

namespace anvil::rpc {
namespace {

struct ServerOutcome {
  bool ok = false;
  std::string reason;
};

// Runs server_authenticate on one end of a socketpair on a thread; the test drives the other.
class AuthPair {
 public:
  explicit AuthPair(std::string server_token) : nonce_(random_bytes(kAuthNonceBytes)) {
    auto [a, b] = channel_pair();
    client_ = std::move(a);
    thread_ = std::thread([this, token = std::move(server_token), ch = std::move(b)]() mutable {
      outcome_.ok = server_authenticate(ch, token, nonce_, std::chrono::steady_clock::now() + std::chrono::seconds(5),
                                        &outcome_.reason);
    });
  }
  ~AuthPair() { join(); }
  ServerOutcome join() {
    if (thread_.joinable()) thread_.join();
    return outcome_;
  }
  std::string server_key() const { return "server:k" + auth_nonce_option(nonce_); }
  Channel& client() { return client_; }
  const std::string& nonce() const { return nonce_; }

 private:
  std::string nonce_;
  Channel client_;
  ServerOutcome outcome_;
  std::thread thread_;
};

TEST(Auth, RightTokenAuthenticatesBothSides) {
  AuthPair p("s3cret-token");
  EXPECT_NO_THROW(client_authenticate(p.client(), "s3cret-token", p.server_key(), "test", Limits{}));
  ServerOutcome out = p.join();
  EXPECT_TRUE(out.ok) << out.reason;
}

TEST(Auth, WrongTokenIsRefusedWithAReason) {
  AuthPair p("s3cret-token");
  try {
    client_authenticate(p.client(), "guess", p.server_key(), "test", Limits{});
    FAIL() << "a wrong token was accepted";
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("wrong auth token"), std::string::npos) << e.what();
  }
  ServerOutcome out = p.join();
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("wrong auth token"), std::string::npos) << out.reason;
}

TEST(Auth, ClientWithoutTokenFailsLocallyWithAClearMessage) {
  std::string key = "server:k" + auth_nonce_option(random_bytes(kAuthNonceBytes));
  auto [a, b] = channel_pair();
  try {
    client_authenticate(a, "", key, "host:1", Limits{});
    FAIL();
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("requires an auth token"), std::string::npos) << e.what();
  }
}

TEST(Auth, TvmClientSendingInitServerGetsAnExceptionNotAHang) {
  AuthPair p("tok");
  // What TVM's client sends right after the handshake: kInitServer with the protocol version.
  Writer w;
  w.i32(static_cast<int32_t>(RPCCode::kInitServer));
  w.str("0.8.0");
  w.i32(0);
  std::string packet = frame_packet(w.take());
  p.client().write_all(packet.data(), packet.size(), 1000);
  Endpoint ep(std::move(p.client()), Limits{});
  std::optional<std::string> body = ep.recv_packet(5000);
  ASSERT_TRUE(body.has_value());
  Reader r(*body, "reply");
  EXPECT_EQ(r.i32("code"), static_cast<int32_t>(RPCCode::kException));
  std::vector<WireValue> seq = read_seq(r, Limits{});
  ASSERT_EQ(seq.size(), 1u);
  EXPECT_NE(seq[0].s.find("requires an auth token"), std::string::npos) << seq[0].s;
  ServerOutcome out = p.join();
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.reason.find("InitServer"), std::string::npos) << out.reason;
}

TEST(Auth, TruncatedOrGarbageAnswersAreRefused) {
  {
    AuthPair p("tok");
    Writer w;
    w.u64(12);
    w.i32(kAuthCode);
    w.raw("12345678");
    p.client().write_all(w.buffer().data(), w.buffer().size(), 1000);
    EXPECT_FALSE(p.join().ok);
  }
  {
    AuthPair p("tok");
    uint64_t huge = uint64_t{1} << 40;
    p.client().write_all(&huge, 8, 1000);
    ServerOutcome out = p.join();
    EXPECT_FALSE(out.ok);
    EXPECT_NE(out.reason.find("bytes"), std::string::npos) << out.reason;
  }
  {
    AuthPair p("tok");
    p.client().write_all("\x44\x00", 2, 1000);
    p.client().close();
    EXPECT_FALSE(p.join().ok);
  }
}

TEST(Auth, ClientWithTokenRefusesAServerThatOffersNone) {
  auto [a, b] = channel_pair();
  try {
    client_authenticate(a, "tok", "server:k", "host:1", Limits{});
    FAIL();
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("offers no authentication"), std::string::npos) << e.what();
  }
  // No token, no nonce: nothing happens (plain TVM servers).
  EXPECT_NO_THROW(client_authenticate(a, "", "server:k", "host:1", Limits{}));
}

TEST(Auth, ClientRejectsAForgedServerProof) {
  std::string nonce = random_bytes(kAuthNonceBytes);
  auto [a, b] = channel_pair();
  std::thread impostor([&, ch = std::move(b)]() mutable {
    uint64_t len = 0;
    ch.read_exact(&len, 8, 5000, 5000);
    std::string body(len, '\0');
    ch.read_exact(body.data(), body.size(), 5000, 5000);
    Writer w;  // a well-formed reply with a proof made without the token
    w.u64(36);
    w.i32(kAuthCode);
    w.raw(digest_view(server_auth_proof("not the token", nonce, body.substr(4, 32))));
    ch.write_all(w.buffer().data(), w.buffer().size(), 1000);
  });
  try {
    client_authenticate(a, "tok", "server:k" + auth_nonce_option(nonce), "host:1", Limits{});
    ADD_FAILURE() << "a forged proof was accepted";
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("failed to prove"), std::string::npos) << e.what();
  }
  impostor.join();
}

TEST(Auth, ProofsDependOnDirectionTokenAndNonces) {
  std::string ns(32, 'a'), nc(32, 'b');
  EXPECT_NE(client_auth_proof("t", ns, nc), server_auth_proof("t", ns, nc));
  EXPECT_NE(client_auth_proof("t", ns, nc), client_auth_proof("u", ns, nc));
  EXPECT_NE(client_auth_proof("t", ns, nc), client_auth_proof("t", nc, ns));
  // Pinned value: HMAC-SHA256("t", "anvil-rpc-auth-v1 client" || 'a'*32 || 'b'*32).
  EXPECT_EQ(client_auth_proof("t", ns, nc), hmac_sha256("t", "anvil-rpc-auth-v1 client" + ns + nc));
}

TEST(Auth, NonceOptionParsing) {
  std::string nonce = random_bytes(kAuthNonceBytes);
  EXPECT_EQ(find_auth_nonce("server:k" + auth_nonce_option(nonce)), nonce);
  EXPECT_EQ(find_auth_nonce("server:k"), std::nullopt);
  EXPECT_EQ(find_auth_nonce("server: -x=1" + auth_nonce_option(nonce) + " -y"), nonce);
  EXPECT_THROW(find_auth_nonce("server:k -auth-nonce=zz"), ProtocolError);
  EXPECT_THROW(find_auth_nonce("server:k -auth-nonce=abcd"), ProtocolError);
}

}  // namespace
}  // namespace anvil::rpc
