// Multi-hop sessions (session constructor rpc.Connect): real server processes on loopback, the
// C++ client talking to an inner server through one or two gateways — calls, tensors, files and
// loaded kernels through both hops, the inner server's errors and crashes reaching the client,
// a hop that dies mid-request, and a client that leaves ending the inner session too.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "anvil/rpc/client.h"
#include "anvil/rpc/test_process.h"
#include "anvil/runtime/register.h"

namespace anvil::rpc {
namespace {

using testing::ChildProcess;

class ServerProcess {
 public:
  explicit ServerProcess(const std::string& key) : child_(argv(key)) {
    std::optional<std::string> port = child_.wait_for(R"(bind to 127\.0\.0\.1:(\d+))");
    if (!port) throw std::runtime_error("the server did not start:\n" + child_.log());
    port_ = std::stoi(*port);
  }
  int port() const { return port_; }
  ChildProcess& child() { return child_; }

 private:
  static std::vector<std::string> argv(const std::string& key) {
    return {ANVIL_RPC_SERVER_BIN, "--host", "127.0.0.1", "--port", "0", "--port-end", "0", "--key", key};
  }
  ChildProcess child_;
  int port_ = 0;
};

// A session with the server at `inner_port` (key "inner") through the gateway at `gateway_port`.
RPCSession connect_through(int gateway_port, int inner_port, const std::string& inner_key = "inner",
                           std::vector<Value> more = {}) {
  ConnectOptions o;
  o.session_constructor_args = {Value(std::string("rpc.Connect")), Value(std::string("127.0.0.1")),
                                Value(int64_t{inner_port}), Value(inner_key), Value(false)};
  for (Value& v : more) o.session_constructor_args.push_back(std::move(v));
  return RPCSession::connect("127.0.0.1", gateway_port, "gateway", 0, o);
}

Tensor iota(int64_t n, uint32_t seed) {
  Tensor t = Tensor::empty({n}, DataType::float32());
  auto* p = static_cast<float*>(t.data());
  uint32_t x = seed;
  for (int64_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;  // a fixed LCG: the same data on every run
    p[i] = static_cast<float>(x >> 8) / 65536.0f;
  }
  return t;
}

class RelayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { register_runtime_functions(); }
};

TEST_F(RelayTest, TwoHopsCarryCallsTensorsFilesAndKernels) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  RPCSession remote = connect_through(gateway.port(), inner.port());
  EXPECT_EQ(remote.remote_key(), "server:gateway");
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{41}).as_int(), 42);
  EXPECT_EQ(remote.get_function("rpc.test.strcat")("a", 0.1).as_string(), "a:0.1");
  Function add10 = remote.get_function("rpc.test.add_to_lhs")(int64_t{10}).as_function();
  EXPECT_EQ(add10(int64_t{12}).as_int(), 22);

  // Tensors both ways, larger than one relay read; seed printed for a failing run.
  const uint32_t seed = 20261201;
  SCOPED_TRACE("seed " + std::to_string(seed));
  Tensor x = iota(300'000, seed);
  RemoteTensor rx = remote.upload_tensor(x, remote.cpu());
  Tensor back = rx.to_host();
  ASSERT_EQ(back.nbytes(), x.nbytes());
  EXPECT_EQ(std::memcmp(back.data(), x.data(), x.nbytes()), 0);

  // Files and a loaded kernel library live on the inner server.
  std::string blob(100'000, '\0');
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<char>((i * 131) & 0xFF);
  remote.upload_bytes(blob, "data.bin");
  EXPECT_EQ(remote.download("data.bin"), blob);
  EXPECT_EQ(remote.listdir("."), std::vector<std::string>{"./data.bin"});
  remote.upload(ANVIL_TEST_KERNELS, "kernels.so");
  Module mod = remote.load_module("kernels.so");
  Tensor small = iota(16, seed + 1);
  RemoteTensor a = remote.upload_tensor(small, remote.cpu());
  RemoteTensor b = remote.empty(std::vector<int64_t>{16}, DataType::float32(), remote.cpu());
  mod["add_one"](a.value(), b.value());
  Tensor out = b.to_host();
  for (int i = 0; i < 16; ++i) {
    EXPECT_FLOAT_EQ(static_cast<float*>(out.data())[i], static_cast<float*>(small.data())[i] + 1.0f) << i;
  }
  Value times = remote.time_evaluator(mod, "add_one", remote.cpu())(a.value(), b.value());
  EXPECT_EQ(times.as_array().size(), 1u);

  remote.close();
  EXPECT_TRUE(gateway.child().wait_for("relaying to the RPC server at 127\\.0\\.0\\.1:" + std::to_string(inner.port())));
}

TEST_F(RelayTest, ThreeHopsChainThroughTheNextHopsConstructor) {
  ServerProcess inner("inner");
  ServerProcess middle("middle");
  ServerProcess gateway("gateway");
  RPCSession remote = connect_through(
      gateway.port(), middle.port(), "middle",
      {Value(std::string("rpc.Connect")), Value(std::string("127.0.0.1")), Value(int64_t{inner.port()}),
       Value(std::string("inner")), Value(false)});
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  remote.upload_bytes("three hops", "f.txt");
  EXPECT_EQ(remote.download("f.txt"), "three hops");
  remote.close();
  EXPECT_TRUE(middle.child().wait_for("relaying to the RPC server at 127\\.0\\.0\\.1:" + std::to_string(inner.port())));
}

TEST_F(RelayTest, InnerServersErrorsReachTheClientAndTheSessionGoesOn) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  RPCSession remote = connect_through(gateway.port(), inner.port());
  try {
    remote.get_function("rpc.test.except")("boom from the inner server");
    FAIL() << "no error";
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kValue);
    EXPECT_NE(std::string(e.what()).find("boom from the inner server"), std::string::npos) << e.what();
  }
  EXPECT_THROW(remote.download("../outside"), RPCError);  // the inner server's confinement
  EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(RelayTest, RefusedOrUnreachableNextHopFailsTheConnectWithTheReason) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  try {
    connect_through(gateway.port(), inner.port(), "wrong-key");
    FAIL() << "connected with a wrong inner key";
  } catch (const RPCError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("rpc.Connect"), std::string::npos) << what;
    EXPECT_NE(what.find("matches key=wrong-key"), std::string::npos) << what;
  }
  // A port nothing listens on: the listener is closed before the connect.
  int dead_port = 0;
  {
    TcpListener l = TcpListener::bind("127.0.0.1", 0, 0);
    dead_port = l.port();
  }
  try {
    connect_through(gateway.port(), dead_port);
    FAIL() << "connected to a closed port";
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kIO) << e.what();
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:" + std::to_string(dead_port)), std::string::npos) << e.what();
  }
  ConnectOptions bad;
  bad.session_constructor_args = {Value(std::string("rpc.Connect")), Value(int64_t{5})};
  try {
    RPCSession::connect("127.0.0.1", gateway.port(), "gateway", 0, bad);
    FAIL() << "accepted a port-less rpc.Connect";
  } catch (const RPCError& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kType) << e.what();
  }
  // The gateway serves on.
  RPCSession ok = connect_through(gateway.port(), inner.port());
  EXPECT_EQ(ok.get_function("rpc.test.addone")(int64_t{2}).as_int(), 3);
}

TEST_F(RelayTest, InnerSessionCrashReachesTheClient) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  {
    RPCSession remote = connect_through(gateway.port(), inner.port());
    remote.upload(ANVIL_RPC_CRASH_KERNELS, "crash.so");
    Module mod = remote.load_module("crash.so");
    try {
      mod["segfault"]();
      FAIL() << "no error";
    } catch (const RPCError& e) {
      // The inner server's report (a sanitizer build exits instead of dying of SIGSEGV).
      std::string what = e.what();
      EXPECT_TRUE(what.find("signal 11") != std::string::npos || what.find("exited with status") != std::string::npos)
          << what;
    }
  }
  RPCSession again = connect_through(gateway.port(), inner.port());
  EXPECT_EQ(again.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

// An inner "server" that completes the handshake and InitServer, then drops the connection on
// the first request: the hop dies mid-request.
class DyingHop {
 public:
  DyingHop() : listener_(TcpListener::bind("127.0.0.1", 0, 0)) {
    thread_ = std::thread([this] { run(); });
  }
  ~DyingHop() { thread_.join(); }
  int port() const { return listener_.port(); }

 private:
  void run() {
    try {
      std::optional<Channel> ch = listener_.accept(20'000);
      if (!ch) return;
      int32_t magic = 0, len = 0;
      ch->read_exact(&magic, 4, 5000, 5000);
      ch->read_exact(&len, 4, 5000, 5000);
      std::string key(static_cast<size_t>(len), '\0');
      ch->read_exact(key.data(), key.size(), 5000, 5000);
      std::string reply = "server:dying";
      int32_t n = static_cast<int32_t>(reply.size());
      ch->write_all(&magic, 4, 5000);
      ch->write_all(&n, 4, 5000);
      ch->write_all(reply.data(), reply.size(), 5000);
      Endpoint ep(std::move(*ch), Limits{});
      if (!ep.recv_packet(5000)) return;  // InitServer
      ep.send_return_void();
      ep.recv_packet(20'000);  // the first request: never answered
      ep.close();
    } catch (const std::exception&) {
    }
  }
  TcpListener listener_;
  std::thread thread_;
};

TEST_F(RelayTest, HopThatDiesMidRequestIsReportedAndTheGatewayServesOn) {
  ServerProcess gateway("gateway");
  {
    DyingHop hop;
    RPCSession remote = connect_through(gateway.port(), hop.port());
    try {
      remote.find_function("rpc.test.addone");
      FAIL() << "no error";
    } catch (const RPCError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find("lost the connection to the RPC server at 127.0.0.1:" + std::to_string(hop.port())),
                std::string::npos)
          << what;
    }
  }
  EXPECT_TRUE(gateway.child().wait_for("the next hop 127\\.0\\.0\\.1:\\d+ went away"));
  ServerProcess inner("inner");
  RPCSession ok = connect_through(gateway.port(), inner.port());
  EXPECT_EQ(ok.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
}

TEST_F(RelayTest, SessionTimeoutOfTheGatewayEndsBothSessions) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  {
    ConnectOptions o;
    o.session_constructor_args = {Value(std::string("rpc.Connect")), Value(std::string("127.0.0.1")),
                                  Value(int64_t{inner.port()}), Value(std::string("inner")), Value(false)};
    RPCSession remote = RPCSession::connect("127.0.0.1", gateway.port(), "gateway", 0.5, o);
    Function addone = remote.get_function("rpc.test.addone");
    EXPECT_EQ(addone(int64_t{1}).as_int(), 2);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    EXPECT_THROW(addone(int64_t{1}), RPCSessionTimeoutError);
  }
  ConnectOptions o;
  o.limits.idle_timeout_ms = 5000;  // fail, don't hang, if the inner session were still held
  RPCSession direct = RPCSession::connect("127.0.0.1", inner.port(), "inner", 0, o);
  EXPECT_EQ(direct.get_function("rpc.test.addone")(int64_t{2}).as_int(), 3);
}

TEST_F(RelayTest, ClientThatLeavesEndsTheInnerSession) {
  ServerProcess inner("inner");
  ServerProcess gateway("gateway");
  {
    RPCSession remote = connect_through(gateway.port(), inner.port());
    EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  }  // closes: Shutdown relayed, inner connection closed
  // The inner server serves one session at a time: it is free again only if the relay let go.
  ConnectOptions o;
  o.limits.idle_timeout_ms = 5000;  // fail, don't hang, if the inner server is still busy
  RPCSession direct = RPCSession::connect("127.0.0.1", inner.port(), "inner", 0, o);
  EXPECT_EQ(direct.get_function("rpc.test.addone")(int64_t{2}).as_int(), 3);
}

}  // namespace
}  // namespace anvil::rpc
