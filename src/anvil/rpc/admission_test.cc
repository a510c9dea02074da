// A real server process against hostile and patient peers on loopback: peers that drip their
// handshake (or their --auth-token answer) one byte at a time are closed at the handshake
// deadline counted from accept, and a real client gets its session while they are connected; a
// client that connects during someone else's long session waits for it, and is not cut off;
// session timeouts at the edges of a double (9.3e9, 1e308, inf, NaN, ...) never end a session
// at once.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>

#include "anvil/rpc/client.h"
#include "anvil/rpc/test_process.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using testing::ChildProcess;

struct TestServer {
  explicit TestServer(std::vector<std::string> extra) : child(argv(std::move(extra))) {
    std::optional<std::string> p = child.wait_for(R"(bind to 127\.0\.0\.1:(\d+))");
    if (!p) throw std::runtime_error("the server did not start:\n" + child.log());
    port = std::stoi(*p);
  }
  static std::vector<std::string> argv(std::vector<std::string> extra) {
    std::vector<std::string> a = {ANVIL_RPC_SERVER_BIN, "--host", "127.0.0.1", "--port", "0", "--port-end", "0"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // A client that gives up after 10 s instead of the default hour (the test then fails, not hangs).
  RPCSession connect(const std::string& key = "", std::optional<std::string> token = "") {
    ConnectOptions o;
    o.limits.idle_timeout_ms = 10'000;
    o.auth_token = std::move(token);
    return RPCSession::connect("127.0.0.1", port, key, 0, o);
  }
  ChildProcess child;
  int port = 0;
};

std::string le32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

// A raw loopback connection that sends its bytes one at a time, `gap` apart, and notes when the
// server closed it.
class SlowPeer {
 public:
  SlowPeer(int port, std::string bytes) : bytes_(std::move(bytes)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    ::inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    started_ = Clock::now();
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS) return;
    pollfd p{fd_, POLLOUT, 0};
    int err = 1;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, 3000) == 1) ::getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    connected_ = err == 0;
    started_ = Clock::now();
  }
  ~SlowPeer() { ::close(fd_); }
  bool connected() const { return connected_; }
  // Notes whether the server closed the connection (what it sends is read and dropped).
  bool closed() {
    if (closed_at_) return true;
    char buf[256];
    ssize_t n = ::recv(fd_, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) closed_at_ = Clock::now();
    return closed_at_.has_value();
  }
  // Sends the next byte, unless closed.
  void send_next() {
    if (!closed() && sent_ < bytes_.size() && ::send(fd_, bytes_.data() + sent_, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1) {
      ++sent_;
    }
  }
  std::optional<Clock::duration> open_for() const {
    if (!closed_at_) return std::nullopt;
    return *closed_at_ - started_;
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::string bytes_;
  size_t sent_ = 0;
  Clock::time_point started_;
  std::optional<Clock::time_point> closed_at_;
};

// Drives every peer: one byte each per `gap`, until all are closed or `limit` has passed.
void drip(std::vector<std::unique_ptr<SlowPeer>>& peers, milliseconds gap, milliseconds limit) {
  auto until = Clock::now() + limit;
  auto next_send = Clock::now();
  while (Clock::now() < until) {
    bool all_closed = true;
    for (auto& p : peers) {
      pollfd f{p->fd(), POLLIN, 0};
      if (::poll(&f, 1, 0) == 1) p->closed();
      all_closed = all_closed && p->closed();
    }
    if (all_closed) return;
    if (Clock::now() >= next_send) {
      for (auto& p : peers) p->send_next();
      next_send += gap;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
}

// A handshake whose key is long enough never to finish while dripping.
std::string slow_hello() { return le32(kRPCMagic) + le32(4000) + "client:" + std::string(3993, 'k'); }

class AdmissionTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

// Before the fix each byte got the whole time left again: peers dripping one byte per 0.9 s
// against a 1 s deadline stayed 3.6 s or more, and the server served no one meanwhile.
TEST_F(AdmissionTest, SlowDripPeersAreClosedAtTheDeadlineAndHoldUpNoOne) {
  TestServer server({"--handshake-timeout", "1"});
  std::vector<std::unique_ptr<SlowPeer>> peers;
  for (int i = 0; i < 10; ++i) {
    peers.push_back(std::make_unique<SlowPeer>(server.port, slow_hello()));
    ASSERT_TRUE(peers.back()->connected()) << "slow peer " << i << " could not connect";
  }
  std::thread dripper([&] { drip(peers, milliseconds(900), milliseconds(6000)); });
  std::this_thread::sleep_for(milliseconds(200));
  auto start = Clock::now();
  bool served = false;
  try {
    RPCSession remote = server.connect();
    served = remote.get_function("rpc.test.addone")(int64_t{41}).as_int() == 42;
  } catch (const Error& e) {
    ADD_FAILURE() << "the real client failed while slow peers were connected: " << e.what();
  }
  auto took = Clock::now() - start;
  dripper.join();
  EXPECT_TRUE(served);
  EXPECT_LT(took, milliseconds(3000)) << "the real client waited for the slow peers";
  for (size_t i = 0; i < peers.size(); ++i) {
    std::optional<Clock::duration> open = peers[i]->open_for();
    ASSERT_TRUE(open) << "slow peer " << i << " was never closed";
    EXPECT_GE(*open, milliseconds(800)) << "slow peer " << i;  // not before its deadline
    EXPECT_LT(*open, milliseconds(3000)) << "slow peer " << i;  // deadline 1 s + 2 s of slack
  }
  EXPECT_NE(server.child.log().find("ms handshake deadline"), std::string::npos) << server.child.log();
}

// With --auth-token: a peer that sends its key at once but drips its answer to the challenge.
TEST_F(AdmissionTest, SlowAuthAnswerIsClosedAtTheDeadline) {
  TestServer server({"--handshake-timeout", "1", "--auth-token", "secret"});
  std::string answer = le32(68) + le32(0) + le32(0x48545541) + std::string(64, 'a');
  std::vector<std::unique_ptr<SlowPeer>> peers;
  for (int i = 0; i < 3; ++i) {
    auto p = std::make_unique<SlowPeer>(server.port, answer);
    ASSERT_TRUE(p->connected());
    std::string hello = le32(kRPCMagic) + le32(7) + "client:";
    ASSERT_EQ(::send(p->fd(), hello.data(), hello.size(), MSG_NOSIGNAL), static_cast<ssize_t>(hello.size()));
    peers.push_back(std::move(p));
  }
  std::thread dripper([&] { drip(peers, milliseconds(900), milliseconds(8000)); });
  std::this_thread::sleep_for(milliseconds(200));
  bool served = false;
  try {
    RPCSession remote = server.connect("", "secret");
    served = remote.get_function("rpc.test.addone")(int64_t{1}).as_int() == 2;
  } catch (const Error& e) {
    ADD_FAILURE() << "the real client failed: " << e.what();
  }
  dripper.join();
  EXPECT_TRUE(served);
  for (size_t i = 0; i < peers.size(); ++i) {
    std::optional<Clock::duration> open = peers[i]->open_for();
    ASSERT_TRUE(open) << "slow peer " << i << " was never closed";
    EXPECT_LT(*open, milliseconds(3000)) << "slow peer " << i;
  }
  EXPECT_NE(server.child.log().find("authentication failed: timed out: not complete within"), std::string::npos)
      << server.child.log();
}

// One session at a time stays: a client that connects during a session longer than the
// handshake deadline waits for it and then gets its own.
TEST_F(AdmissionTest, ClientQueuedBehindALongSessionIsServedAfterIt) {
  TestServer server({"--handshake-timeout", "1"});
  RPCSession first = server.connect();
  ASSERT_EQ(first.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  auto second = std::async(std::launch::async, [&] {
    RPCSession remote = server.connect();
    return remote.get_function("rpc.test.addone")(int64_t{2}).as_int();
  });
  EXPECT_EQ(second.wait_for(std::chrono::milliseconds(2500)), std::future_status::timeout)
      << "a second session ran beside the first";
  first.close();
  ASSERT_EQ(second.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_EQ(second.get(), 3);
}

// Session timeouts at the edges never end the session at once (9.3e9 s and more overflowed the
// nanosecond clock: the session ended with RPCSessionTimeoutError at the first call).
TEST_F(AdmissionTest, SessionTimeoutsAtTheEdgesKeepTheSession) {
  TestServer server({});
  for (const char* t : {"9.3e9", "1e308", "inf", "nan", "-1", "0", "1e999"}) {
    // The key's options travel whole: "client: -timeout=<t>".
    RPCSession remote = server.connect(str_cat(" -timeout=", t));
    Function addone = remote.get_function("rpc.test.addone");
    try {
      EXPECT_EQ(addone(int64_t{1}).as_int(), 2) << t;
      std::this_thread::sleep_for(milliseconds(50));
      EXPECT_EQ(addone(int64_t{2}).as_int(), 3) << t;
    } catch (const Error& e) {
      ADD_FAILURE() << "-timeout=" << t << ": " << e.what();
    }
    remote.close();
  }
  std::string log = server.child.log();
  EXPECT_NE(log.find("exceeds the longest supported"), std::string::npos) << log;
  EXPECT_NE(log.find("is infinite: no session timeout"), std::string::npos) << log;
}

}  // namespace
}  // namespace anvil::rpc
