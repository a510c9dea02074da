// The server's side of the tracker protocol against a scripted fake tracker: magic exchange,
// UPDATE_INFO, PUT of "<key>:<random>" match keys, clients admitted with the match key only,
// and a fresh PUT after every session.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <atomic>
#include <mutex>
#include <thread>

#include "anvil/rpc/client.h"
#include "anvil/rpc/protocol.h"
#include "anvil/rpc/test_process.h"
#include "anvil/rpc/transport.h"

namespace anvil::rpc {
namespace {

using Json = nlohmann::json;

// Accepts one server, answers 0 to UPDATE_INFO and PUT, [] to GET_PENDING_MATCHKEYS, and
// records every message.
class FakeTracker {
 public:
  FakeTracker() : listener_(TcpListener::bind("127.0.0.1", 0, 0)) {
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeTracker() {
    stop_ = true;
    thread_.join();
  }
  int port() const { return listener_.port(); }
  std::vector<Json> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  // The match keys PUT so far, waiting up to timeout_s for at least `count`.
  std::vector<std::string> wait_for_puts(size_t count, double timeout_s = 20) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      std::vector<std::string> keys;
      for (const Json& m : messages()) {
        if (m[0] == 3) keys.push_back(m[2][1].get<std::string>());
      }
      if (keys.size() >= count || std::chrono::steady_clock::now() > deadline) return keys;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  void serve() {
    std::optional<Channel> conn;
    while (!stop_ && !conn) conn = listener_.accept(100);
    if (!conn) return;
    try {
      int32_t magic = 0;
      conn->read_exact(&magic, 4, 5000, 5000);
      conn->write_all(&magic, 4, 5000);
      while (!stop_) {
        int32_t len = 0;
        try {
          if (!conn->read_exact(&len, 4, 100, 5000, true)) return;
        } catch (const ChannelError&) {
          continue;  // idle: check stop_ again
        }
        std::string text(static_cast<size_t>(len), '\0');
        conn->read_exact(text.data(), text.size(), 5000, 5000);
        Json msg = Json::parse(text);
        {
          std::lock_guard<std::mutex> lock(mutex_);
          messages_.push_back(msg);
        }
        std::string reply = msg[0] == 7 ? "[]" : "0";
        int32_t reply_len = static_cast<int32_t>(reply.size());
        conn->write_all(&reply_len, 4, 5000);
        conn->write_all(reply.data(), reply.size(), 5000);
      }
    } catch (const std::exception&) {
    }
  }

  TcpListener listener_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::vector<Json> messages_;
};

TEST(TrackerLinkTest, RegistersAndRePutsAfterEachSession) {
  FakeTracker tracker;
  testing::ChildProcess server({ANVIL_RPC_SERVER_BIN, "--host", "127.0.0.1", "--port", "0", "--port-end", "0",
                                "--key", "dev", "--tracker", "127.0.0.1:" + std::to_string(tracker.port()),
                                "--custom-addr", "10.1.2.3"});
  std::optional<std::string> port_text = server.wait_for(R"(bind to 127\.0\.0\.1:(\d+))");
  ASSERT_TRUE(port_text) << server.log();
  int port = std::stoi(*port_text);

  std::vector<std::string> keys = tracker.wait_for_puts(1);
  ASSERT_EQ(keys.size(), 1u) << server.log();
  std::vector<Json> messages = tracker.messages();
  ASSERT_GE(messages.size(), 2u);
  EXPECT_EQ(messages[0], Json::parse(R"([5, {"key": "server:dev", "addr": ["10.1.2.3", )" + *port_text + "]}]"));
  EXPECT_EQ(messages[1][0], 3);
  EXPECT_EQ(messages[1][1], "dev");
  EXPECT_EQ(messages[1][2][0], port);
  EXPECT_EQ(messages[1][3], "10.1.2.3");
  ASSERT_TRUE(keys[0].starts_with("dev:")) << keys[0];
  EXPECT_EQ(keys[0].find(':', 4), std::string::npos) << "the suffix must not contain ':'";

  // Only the match key is admitted.
  EXPECT_THROW(RPCSession::connect("127.0.0.1", port, "dev"), RPCError);
  {
    RPCSession remote = RPCSession::connect("127.0.0.1", port, keys[0]);
    EXPECT_EQ(remote.get_function("rpc.test.addone")(int64_t{1}).as_int(), 2);
  }
  // After the session a fresh key is PUT.
  keys = tracker.wait_for_puts(2);
  ASSERT_EQ(keys.size(), 2u) << server.log();
  EXPECT_NE(keys[0], keys[1]);
  RPCSession again = RPCSession::connect("127.0.0.1", port, keys[1]);
  EXPECT_EQ(again.get_function("rpc.test.addone")(int64_t{2}).as_int(), 3);
}

}  // namespace
}  // namespace anvil::rpc
