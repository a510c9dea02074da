// The acceptor's handshake in pieces and under one deadline: session timeouts at the edges of a
// double (0, negative, NaN, inf, beyond the clock), the header checks and answers, and
// Channel::read_exact_until, whose deadline holds however slowly the bytes trickle in.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "anvil/rpc/handshake.h"

#include "anvil/rpc/auth.h"

namespace anvil::rpc {
namespace {

using Clock = std::chrono::steady_clock;

TEST(HandshakeTimeouts, EdgesOfADoubleAreIgnoredOrClamped) {
  std::vector<std::string> w;
  EXPECT_FALSE(parse_client_key("client:k -timeout=0", &w).session_timeout);
  EXPECT_TRUE(w.empty());  // 0 is "no timeout", as in TVM: nothing to warn about
  EXPECT_FALSE(parse_client_key("client:k -timeout=-1", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=-0.5", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=nan", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=-nan", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=inf", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=-inf", &w).session_timeout);
  EXPECT_FALSE(parse_client_key("client:k -timeout=1e999", &w).session_timeout);  // strtod: inf
  EXPECT_EQ(w.size(), 7u);
  // Beyond ~9.2e9 s the nanosecond clock overflows (the session then ended at once): clamped.
  for (const char* big : {"9.3e9", "1e10", "1e308", "1.7976931348623157e308"}) {
    w.clear();
    std::optional<double> t = parse_client_key(str_cat("client:k -timeout=", big), &w).session_timeout;
    ASSERT_TRUE(t) << big;
    EXPECT_EQ(*t, kMaxSessionTimeoutS) << big;
    ASSERT_EQ(w.size(), 1u) << big;
    EXPECT_NE(w[0].find("exceeds the longest supported"), std::string::npos) << w[0];
  }
  // The largest honoured value still fits the clock the server uses.
  auto far = Clock::now() +
             std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kMaxSessionTimeoutS));
  EXPECT_GT(far, Clock::now() + std::chrono::hours(24 * 365 * 30));
  EXPECT_EQ(parse_client_key("client:k -timeout=9.2e9").session_timeout, kMaxSessionTimeoutS);
  EXPECT_EQ(parse_client_key("client:k -timeout=1e9").session_timeout, 1e9);
  EXPECT_EQ(parse_client_key("client:k -timeout=86400").session_timeout, 86400.0);
}

TEST(HandshakeAcceptor, HeaderChecksAndAnswers) {
  Limits limits;
  EXPECT_EQ(check_hello_header(kRPCMagic, 10, limits), "");
  EXPECT_NE(check_hello_header(0x1234, 10, limits).find("bad magic"), std::string::npos);
  EXPECT_NE(check_hello_header(kRPCMagic, -1, limits).find("key length -1"), std::string::npos);
  EXPECT_NE(check_hello_header(kRPCMagic, 4097, limits).find("key length 4097"), std::string::npos);

  HelloAnswer ok = answer_hello("client:x1 -timeout=5", "x1", "x1 -auth-nonce=00");
  ASSERT_TRUE(ok.ok);
  int32_t code = 0, len = 0;
  std::memcpy(&code, ok.send.data(), 4);
  std::memcpy(&len, ok.send.data() + 4, 4);
  EXPECT_EQ(code, kRPCCodeSuccess);
  EXPECT_EQ(ok.send.substr(8), "server:x1 -auth-nonce=00");
  EXPECT_EQ(static_cast<size_t>(len), ok.send.size() - 8);

  HelloAnswer no = answer_hello("client:x2", "x1", "x1");
  EXPECT_FALSE(no.ok);
  ASSERT_EQ(no.send.size(), 4u);
  std::memcpy(&code, no.send.data(), 4);
  EXPECT_EQ(code, kRPCCodeMismatch);
  EXPECT_NE(no.reason.find("mismatched key 'client:x2'"), std::string::npos);
}

// A writer that sends `bytes` one at a time, `gap` apart, until done or told to stop.
class Dripper {
 public:
  Dripper(Channel& ch, std::string bytes, std::chrono::milliseconds gap)
      : thread_([&ch, bytes = std::move(bytes), gap, this] {
          for (char c : bytes) {
            if (stop_.load()) return;
            try {
              ch.write_all(&c, 1, 1000);
            } catch (const Error&) {
              return;
            }
            std::this_thread::sleep_for(gap);
          }
        }) {}
  ~Dripper() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

TEST(ChannelDeadline, ReadExactUntilHoldsHoweverSlowlyBytesArrive) {
  auto [a, b] = channel_pair();
  // 20 bytes, one every 50 ms: each byte is well within any per-read wait, the whole is not.
  Dripper drip(b, std::string(20, 'x'), std::chrono::milliseconds(50));
  char buf[20];
  auto start = Clock::now();
  EXPECT_THROW(a.read_exact_until(buf, sizeof buf, start + std::chrono::milliseconds(300)), ChannelError);
  auto took = Clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(250));
  EXPECT_LT(took, std::chrono::milliseconds(900));  // all 20 bytes would take >= 950 ms
}

TEST(ChannelDeadline, ReadExactUntilReadsWhatArrivesInTime) {
  auto [a, b] = channel_pair();
  Dripper drip(b, "hello", std::chrono::milliseconds(5));
  char buf[5];
  ASSERT_TRUE(a.read_exact_until(buf, sizeof buf, Clock::now() + std::chrono::seconds(5)));
  EXPECT_EQ(std::string(buf, 5), "hello");
  b.close();
  EXPECT_FALSE(a.read_exact_until(buf, 1, Clock::now() + std::chrono::seconds(5), /*allow_eof=*/true));
}

TEST(HandshakeAcceptor, AcceptHandshakeHasOneDeadline) {
  auto [server, client] = channel_pair();
  std::string hello;
  int32_t words[2] = {kRPCMagic, 9};
  hello.append(reinterpret_cast<const char*>(words), 8);
  hello += "client:x1";
  // 17 bytes 80 ms apart: about 1.3 s in all, against a 400 ms deadline.
  Dripper drip(client, hello, std::chrono::milliseconds(80));
  std::string reason;
  auto start = Clock::now();
  EXPECT_FALSE(accept_handshake(server, "x1", "x1", Limits{}, start + std::chrono::milliseconds(400), &reason));
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1000));
  EXPECT_TRUE(reason.find("deadline") != std::string::npos || reason.find("timed out") != std::string::npos) << reason;
}

// The client's side: a server dripping its reply one byte per 100 ms (17 bytes, about 1.7 s)
// is cut off at the 500 ms handshake timeout, not given 500 ms again for every read.
TEST(HandshakeClient, ConnectHandshakeHasOneDeadline) {
  auto [client, server] = channel_pair();
  std::string reply;
  int32_t words[2] = {kRPCCodeSuccess, 9};
  reply.append(reinterpret_cast<const char*>(words), 8);
  reply += "server:x1";
  Dripper drip(server, reply, std::chrono::milliseconds(100));
  Limits limits;
  limits.handshake_timeout_ms = 500;
  auto start = Clock::now();
  EXPECT_THROW(connect_handshake(client, "client:x1", "peer", limits), Error);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
}

TEST(HandshakeClient, ClientAuthenticateHasOneDeadline) {
  auto [client, server] = channel_pair();
  std::string reply;
  uint64_t length = 36;
  reply.append(reinterpret_cast<const char*>(&length), 8);
  reply.append(reinterpret_cast<const char*>(&kAuthCode), 4);
  reply += std::string(32, 'p');  // 44 bytes, 100 ms apart: about 4.4 s
  Dripper drip(server, reply, std::chrono::milliseconds(100));
  Limits limits;
  limits.handshake_timeout_ms = 500;
  std::string server_key = "server:x1 " + std::string(kAuthNonceOption) + std::string(64, 'a');
  auto start = Clock::now();
  EXPECT_THROW(client_authenticate(client, "token", server_key, "peer", limits), Error);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(1500));
}

}  // namespace
}  // namespace anvil::rpc
