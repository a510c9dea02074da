// The proxy on a loopback port (in this process, on a thread) with real server processes
// dialling it (`--through-proxy`) and the C++ client: a whole session through it, DUPLICATE and
// MISMATCH, tracker mode with a tracker in this process, auth tokens end to end (also through a
// tracker without a proxy), and hostile input that must close one connection and nothing else.
#include "anvil/rpc/proxy/proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "anvil/rpc/client.h"
#include "anvil/rpc/test_process.h"
#include "anvil/rpc/tracker/tracker.h"
#include "anvil/rpc/tracker/tracker_client.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc::proxy {
namespace {

using namespace std::chrono_literals;
using anvil::rpc::testing::ChildProcess;

class RunningProxy {
 public:
  explicit RunningProxy(ProxyOptions o = {}) {
    o.host = "127.0.0.1";
    o.port = 0;
    o.port_end = 0;
    proxy_ = std::make_unique<Proxy>(o);
    thread_ = std::thread([this] { proxy_->run(); });
  }
  ~RunningProxy() {
    proxy_->stop();
    thread_.join();
  }
  int port() const { return proxy_->port(); }

 private:
  std::unique_ptr<Proxy> proxy_;
  std::thread thread_;
};

class RunningTracker {
 public:
  RunningTracker() {
    tracker::TrackerOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.port_end = 0;
    o.stop_key = "tracker:test";
    tracker_ = std::make_unique<tracker::Tracker>(o);
    thread_ = std::thread([this] { tracker_->run(); });
  }
  ~RunningTracker() {
    tracker_->stop();
    thread_.join();
  }
  int port() const { return tracker_->port(); }

 private:
  std::unique_ptr<tracker::Tracker> tracker_;
  std::thread thread_;
};

// An Anvil server process that dials the proxy.
std::unique_ptr<ChildProcess> proxied_server(int proxy_port, const std::string& key,
                                             std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {ANVIL_RPC_SERVER_BIN, "--through-proxy", "--host", "127.0.0.1", "--port",
                                   std::to_string(proxy_port), "--key", key};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return std::make_unique<ChildProcess>(argv);
}

// A raw loopback connection for speaking (or mis-speaking) the handshake by hand.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  }
  ~Raw() { ::close(fd_); }
  void send(const std::string& bytes) { ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL); }
  void send_hello(const std::string& key) { send(i32(kRPCMagic) + i32(static_cast<int32_t>(key.size())) + key); }
  std::string recv(size_t n, std::chrono::milliseconds timeout = 5s) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      ssize_t r = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  bool closed_by_peer(std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 50) > 0) {
        char buf[4096];
        if (::recv(fd_, buf, sizeof(buf), 0) <= 0) return true;
      }
    }
    return false;
  }
  static std::string i32(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

 private:
  int fd_ = -1;
};

class ProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

void expect_working_session(RPCSession& remote) {
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{41}).as_int(), 42);
  Tensor host = Tensor::empty({64, 33}, DataType::float32());
  auto* p = static_cast<float*>(host.data());
  for (int64_t i = 0; i < host.numel(); ++i) p[i] = static_cast<float>(i) * 0.5f;
  RemoteTensor t = remote.upload_tensor(host, remote.cpu());
  Tensor back = t.to_host();
  ASSERT_EQ(back.nbytes(), host.nbytes());
  EXPECT_EQ(std::memcmp(back.data(), host.data(), host.nbytes()), 0);
}

TEST_F(ProxyTest, SessionThroughProxyRunsAFunctionAndCopiesATensor) {
  RunningProxy proxy;
  auto server = proxied_server(proxy.port(), "dev");
  for (int round = 0; round < 2; ++round) {  // the server dials again after each session
    RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "dev", /*session_timeout=*/30);
    EXPECT_EQ(remote.remote_key(), "server:dev");
    expect_working_session(remote);
    remote.close();
  }
  EXPECT_TRUE(server->running()) << server->log();
}

TEST_F(ProxyTest, ClientMayComeBeforeTheServer) {
  RunningProxy proxy;
  std::unique_ptr<ChildProcess> server;
  std::thread late([&] {
    std::this_thread::sleep_for(300ms);
    server = proxied_server(proxy.port(), "late");
  });
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "late");
  late.join();
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(ProxyTest, SecondServerWithTheSameKeyGetsDuplicate) {
  RunningProxy proxy;
  Raw first(proxy.port());
  first.send_hello("server:dup");
  std::this_thread::sleep_for(200ms);
  Raw second(proxy.port());
  second.send_hello("server:dup");
  EXPECT_EQ(second.recv(4), Raw::i32(kRPCCodeDuplicate));
  EXPECT_TRUE(second.closed_by_peer());
  // Our server is told DUPLICATE too, says why, and keeps trying (TVM's exits).
  auto server = proxied_server(proxy.port(), "dup");
  EXPECT_TRUE(server->wait_for("already been used in proxy.*still serving: dialling again in 1 s").has_value())
      << server->log();
  EXPECT_TRUE(server->running()) << server->log();
  // The first one is still waiting and pairs normally.
  Raw client(proxy.port());
  client.send_hello("client:dup");
  EXPECT_EQ(client.recv(4), Raw::i32(kRPCCodeSuccess));
  EXPECT_EQ(first.recv(4), Raw::i32(kRPCCodeSuccess));
}

// Issue #10.4: a peer that registers the key of a real server while that server is in a session
// used to make it exit on its next dial (DUPLICATE): one connection took the device offline for
// good. It now backs off and dials again, and serves once the squatter is gone.
TEST_F(ProxyTest, ServerOutlastsAPeerSquattingOnItsKey) {
  RunningProxy proxy;
  auto server = proxied_server(proxy.port(), "victim");
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "victim", /*session_timeout=*/30);
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  auto squatter = std::make_unique<Raw>(proxy.port());
  squatter->send_hello("server:victim");
  std::this_thread::sleep_for(200ms);  // the proxy has it waiting under the key
  remote.close();                      // the real server dials again and meets the squatter
  ASSERT_TRUE(server->wait_for("key 'server:victim' has already been used.*dialling again in 1 s").has_value())
      << server->log();
  ASSERT_TRUE(server->wait_for("dialling again in 2 s").has_value()) << server->log();  // and again
  EXPECT_TRUE(server->running()) << server->log();
  squatter.reset();  // gone: the proxy drops it, the server's next dial (within 2 s) waits normally
  RPCSession again = RPCSession::connect("127.0.0.1", proxy.port(), "victim", /*session_timeout=*/30);
  expect_working_session(again);
  EXPECT_TRUE(server->running()) << server->log();
}

TEST_F(ProxyTest, UnmatchedClientGetsMismatchAfterItsTimeout) {
  ProxyOptions o;
  o.timeout_client = 300ms;
  RunningProxy proxy(o);
  auto server = proxied_server(proxy.port(), "present");
  auto start = std::chrono::steady_clock::now();
  try {
    RPCSession::connect("127.0.0.1", proxy.port(), "absent");
    FAIL() << "connected to a key nobody serves";
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot find server that matches key=absent"), std::string::npos) << e.what();
  }
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "present");
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(ProxyTest, ServerWhoseWaitExpiresDialsAgain) {
  ProxyOptions o;
  o.timeout_server = 200ms;
  RunningProxy proxy(o);
  auto server = proxied_server(proxy.port(), "patient");
  ASSERT_TRUE(server->wait_for("has no matching client.*connecting again").has_value()) << server->log();
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "patient");
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{2}).as_int(), 3);
}

TEST_F(ProxyTest, HostileInputClosesOnlyThatConnection) {
  ProxyOptions o;
  o.handshake_timeout = 300ms;
  o.max_key_bytes = 64;
  RunningProxy proxy(o);
  auto server = proxied_server(proxy.port(), "safe");
  {
    Raw bad(proxy.port());
    bad.send("GET / HTTP/1.1\r\n\r\n");
    EXPECT_TRUE(bad.closed_by_peer());
  }
  {
    Raw big(proxy.port());
    big.send(Raw::i32(kRPCMagic) + Raw::i32(65));
    EXPECT_TRUE(big.closed_by_peer());
  }
  {
    Raw negative(proxy.port());
    negative.send(Raw::i32(kRPCMagic) + Raw::i32(-5));
    EXPECT_TRUE(negative.closed_by_peer());
  }
  {
    Raw silent(proxy.port());  // never completes the handshake
    silent.send(Raw::i32(kRPCMagic));
    EXPECT_TRUE(silent.closed_by_peer(3s));
  }
  {
    Raw truncated(proxy.port());
    truncated.send(Raw::i32(kRPCMagic) + Raw::i32(20) + "client:");
  }  // closes mid-key
  {
    Raw eager(proxy.port());  // bytes beyond the key before the answer
    eager.send(Raw::i32(kRPCMagic) + Raw::i32(12) + "client:other" + "X");
    EXPECT_TRUE(eager.closed_by_peer());
  }
  {
    Raw no_role(proxy.port());
    no_role.send_hello("safe");
    EXPECT_TRUE(no_role.closed_by_peer());
  }
  {
    Raw waiting(proxy.port());  // waits as a client, then talks out of turn
    waiting.send_hello("client:nobody");
    std::this_thread::sleep_for(100ms);
    waiting.send("early");
    EXPECT_TRUE(waiting.closed_by_peer());
  }
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "safe");
  expect_working_session(remote);
}

TEST_F(ProxyTest, TrackerModeRegistersProxiedServersByKey) {
  RunningTracker tracker;
  ProxyOptions o;
  o.tracker = "127.0.0.1:" + std::to_string(tracker.port());
  RunningProxy proxy(o);
  auto server = proxied_server(proxy.port(), "farm");
  tracker::TrackerClient client("127.0.0.1", tracker.port());
  // Wait until the proxy has PUT the server.
  tracker::Json summary;
  for (int i = 0; i < 250; ++i) {
    summary = client.summary();
    const tracker::Json& s = summary;
    if (s["queue_info"].contains("farm") && s["queue_info"]["farm"]["free"] == 1 && s["server_info"].size() == 1) {
      break;
    }
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(summary["queue_info"]["farm"]["free"], 1) << summary.dump() << "\n" << server->log();
  ASSERT_EQ(summary["server_info"].size(), 1u) << summary.dump();
  EXPECT_EQ(summary["server_info"][0]["key"], "server:proxy[farm]") << summary.dump();
  tracker::Json reply = client.call(tracker::Json::array({4, "farm", "", 1}));
  ASSERT_EQ(reply[0], 0) << reply.dump();
  std::string addr = reply[1][0];
  int port = reply[1][1];
  std::string matchkey = reply[1][2];
  EXPECT_EQ(port, proxy.port());
  EXPECT_EQ(matchkey.rfind("farm:", 0), 0u) << matchkey;
  // The device key alone does not pair in tracker mode.
  EXPECT_THROW(RPCSession::connect("127.0.0.1", proxy.port(), "farm"), RPCError);
  RPCSession remote = RPCSession::connect(addr, port, matchkey);
  expect_working_session(remote);
  remote.close();
  // The server dials again and is offered again; when it goes away for good, the tracker
  // stops offering it (the proxy re-registers through a fresh connection).
  auto free_count = [&] {
    const tracker::Json s = client.summary();
    return s["queue_info"].contains("farm") ? s["queue_info"]["farm"]["free"].get<int>() : 0;
  };
  for (int i = 0; i < 250 && free_count() != 1; ++i) std::this_thread::sleep_for(20ms);
  ASSERT_EQ(free_count(), 1) << server->log();
  server->stop();
  for (int i = 0; i < 250 && free_count() != 0; ++i) std::this_thread::sleep_for(20ms);
  EXPECT_EQ(free_count(), 0) << client.summary().dump();
}

TEST_F(ProxyTest, AuthTokenWorksThroughTheProxy) {
  RunningProxy proxy;
  auto server = proxied_server(proxy.port(), "locked", {"--auth-token", "proxy-secret"});
  ConnectOptions wrong;
  wrong.auth_token = "guess";
  EXPECT_THROW(RPCSession::connect("127.0.0.1", proxy.port(), "locked", 0, wrong), RPCError);
  ConnectOptions none;
  none.auth_token = "";
  EXPECT_THROW(RPCSession::connect("127.0.0.1", proxy.port(), "locked", 0, none), RPCError);
  ConnectOptions right;
  right.auth_token = "proxy-secret";
  RPCSession remote = RPCSession::connect("127.0.0.1", proxy.port(), "locked", 0, right);
  expect_working_session(remote);
  EXPECT_TRUE(server->wait_for("wrong auth token").has_value()) << server->log();
}

TEST_F(ProxyTest, TokenServerOnATrackerStillRequiresTheToken) {
  RunningTracker tracker;
  ChildProcess server({ANVIL_RPC_SERVER_BIN, "--host", "127.0.0.1", "--port", "0", "--port-end", "0", "--tracker",
                       "127.0.0.1:" + std::to_string(tracker.port()), "--key", "secured", "--auth-token", "t0ken"});
  tracker::TrackerClient client("127.0.0.1", tracker.port());
  auto request = [&] {
    tracker::Json reply = client.call(tracker::Json::array({4, "secured", "", 1}));
    EXPECT_EQ(reply[0], 0) << reply.dump();
    return reply[1];
  };
  tracker::Json first = request();
  ConnectOptions none;
  none.auth_token = "";
  try {
    RPCSession::connect(first[0].get<std::string>(), first[1].get<int>(), first[2].get<std::string>(), 0, none);
    FAIL() << "connected without the token";
  } catch (const RPCError& e) {
    EXPECT_NE(std::string(e.what()).find("requires an auth token"), std::string::npos) << e.what();
  }
  // The failed attempt used up nothing on the server side: the same match key still works.
  ConnectOptions right;
  right.auth_token = "t0ken";
  RPCSession remote =
      RPCSession::connect(first[0].get<std::string>(), first[1].get<int>(), first[2].get<std::string>(), 0, right);
  expect_working_session(remote);
}

}  // namespace
}  // namespace anvil::rpc::proxy
