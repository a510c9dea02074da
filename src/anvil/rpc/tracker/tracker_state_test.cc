// Tests of the tracker's protocol logic without sockets: replies, matching, pending match
// keys, clean-up on close, SUMMARY's shape, and the per-connection limits.
#include "anvil/rpc/tracker/tracker_state.h"

#include <gtest/gtest.h>

namespace anvil::rpc::tracker {
namespace {

std::vector<std::string> texts_to(const HandleResult& r, ConnId conn) {
  std::vector<std::string> out;
  for (const auto& o : r.out) {
    if (o.conn == conn) out.push_back(o.text);
  }
  return out;
}

TEST(TrackerState, MatchesARequestWithAServerAndForgetsTheMatchkey) {
  TrackerState s("tracker:0.1");
  s.open(1, "10.0.0.5");  // server
  s.open(2, "10.0.0.9");  // client
  EXPECT_EQ(texts_to(s.handle(1, R"([5, {"key": "server:rasp", "addr": [null, 9090]}])"), 1),
            std::vector<std::string>{"0"});
  EXPECT_EQ(texts_to(s.handle(1, R"([3, "rasp", [9090, "rasp:0.7"], null])"), 1), std::vector<std::string>{"0"});
  EXPECT_EQ(texts_to(s.handle(1, "[7]"), 1), std::vector<std::string>{R"(["rasp:0.7"])"});
  EXPECT_EQ(py_dumps(s.summary()),
            R"({"queue_info": {"rasp": {"free": 1, "pending": 0}}, "server_info": [{"key": "server:rasp", "addr": ["10.0.0.5", 9090]}]})");
  auto r = s.handle(2, R"([4, "rasp", "", 1])");
  EXPECT_EQ(texts_to(r, 2), std::vector<std::string>{R"([0, ["10.0.0.5", 9090, "rasp:0.7"]])"});
  EXPECT_EQ(texts_to(s.handle(1, "[7]"), 1), std::vector<std::string>{"[]"});
  EXPECT_EQ(py_dumps(s.summary()["queue_info"]), R"({"rasp": {"free": 0, "pending": 0}})");
}

TEST(TrackerState, UsesTheCustomAddressAndEchoesThePort) {
  TrackerState s("k");
  s.open(1, "127.0.0.1");
  s.open(2, "127.0.0.1");
  s.handle(1, R"([3, "dev", ["9999", "dev:1"], "test_addr"])");
  EXPECT_EQ(texts_to(s.handle(2, R"([4, "dev", "", 1])"), 2),
            std::vector<std::string>{R"([0, ["test_addr", "9999", "dev:1"]])"});
}

TEST(TrackerState, WaitingRequestsAreServedByPriority) {
  TrackerState s("k");
  s.open(1, "127.0.0.1");
  for (ConnId c = 2; c <= 5; ++c) s.open(c, "127.0.0.1");
  s.handle(2, R"([4, "d", "", 1])");
  s.handle(3, R"([4, "d", "", 3])");
  s.handle(4, R"([4, "d", "", 1])");
  s.handle(5, R"([4, "d", "", 2])");
  EXPECT_EQ(s.summary()["queue_info"]["d"]["pending"], 4);
  std::vector<ConnId> order;
  for (int i = 0; i < 4; ++i) {
    auto r = s.handle(1, R"([3, "d", [1, "d:)" + std::to_string(i) + R"("]])");
    ASSERT_EQ(r.out.size(), 2u);  // "0" to the server, the match to a client
    order.push_back(r.out[1].conn);
  }
  EXPECT_EQ(order, (std::vector<ConnId>{3, 5, 2, 4}));
}

TEST(TrackerState, ClosingDropsServersAndRequestsAtOnce) {
  TrackerState s("k");
  s.open(1, "127.0.0.1");
  s.open(2, "127.0.0.1");
  s.open(3, "127.0.0.1");
  s.handle(1, R"([3, "a", [1, "a:1"]])");  // no UPDATE_INFO: still removed on close (TVM keeps it)
  s.handle(2, R"([4, "b", "", 1])");
  s.close(1);
  s.close(2);
  EXPECT_EQ(py_dumps(s.summary()["queue_info"]), R"({"a": {"free": 0, "pending": 0}, "b": {"free": 0, "pending": 0}})");
  // A new server for "b" is not handed to the client that left.
  auto r = s.handle(3, R"([3, "b", [2, "b:1"]])");
  EXPECT_EQ(r.out.size(), 1u);
  EXPECT_EQ(s.summary()["queue_info"]["b"]["free"], 1);
  EXPECT_EQ(s.counters().values_dropped_on_close, 1u);
  EXPECT_EQ(s.counters().requests_dropped_on_close, 1u);
}

TEST(TrackerState, SummaryListsOnlyServersAndMergesInfo) {
  TrackerState s("k");
  s.open(1, "1.1.1.1");
  s.open(2, "2.2.2.2");
  s.handle(1, R"([5, {"key": "server:x", "addr": [null, 1]}])");
  s.handle(1, R"([5, {"addr": ["9.9.9.9", 2], "extra": true}])");
  s.handle(2, R"([5, {"key": "client", "addr": [null, 0]}])");
  EXPECT_EQ(py_dumps(s.summary()["server_info"]), R"([{"key": "server:x", "addr": ["9.9.9.9", 2], "extra": true}])");
}

TEST(TrackerState, StopNeedsTheKey) {
  TrackerState s("tracker:0.42");
  s.open(1, "127.0.0.1");
  auto wrong = s.handle(1, R"([2, "tracker:0.41"])");
  EXPECT_FALSE(wrong.stop);
  EXPECT_EQ(texts_to(wrong, 1), std::vector<std::string>{"-1"});
  auto right = s.handle(1, R"([2, "tracker:0.42"])");
  EXPECT_TRUE(right.stop);
  EXPECT_EQ(texts_to(right, 1), std::vector<std::string>{"0"});
}

TEST(TrackerState, EnforcesPerConnectionAndKeyLimits) {
  StateLimits limits;
  limits.max_values_per_conn = 2;
  limits.max_requests_per_conn = 2;
  limits.max_info_bytes = 100;
  limits.max_keys = 3;
  TrackerState s("k", limits);
  s.open(1, "127.0.0.1");
  EXPECT_FALSE(s.handle(1, R"([3, "a", [1, "a:1"]])").close_sender);
  EXPECT_FALSE(s.handle(1, R"([3, "a", [1, "a:2"]])").close_sender);
  EXPECT_TRUE(s.handle(1, R"([3, "a", [1, "a:3"]])").close_sender);
  s.open(2, "127.0.0.1");
  EXPECT_FALSE(s.handle(2, R"([4, "b", "", 1])").close_sender);
  EXPECT_FALSE(s.handle(2, R"([4, "b", "", 1])").close_sender);
  auto third = s.handle(2, R"([4, "b", "", 1])");
  EXPECT_TRUE(third.close_sender);
  EXPECT_NE(third.close_reason.find("limit"), std::string::npos);
  s.open(3, "127.0.0.1");
  EXPECT_TRUE(s.handle(3, R"([5, {"addr": [null, 1], "pad": ")" + std::string(200, 'x') + R"("}])").close_sender);
  // Keys: "a" and "b" are busy; "c" fits; "d" does not until an idle queue can be forgotten.
  s.open(4, "127.0.0.1");
  EXPECT_FALSE(s.handle(4, R"([4, "c", "", 1])").close_sender);
  EXPECT_TRUE(s.handle(4, R"([4, "d", "", 1])").close_sender);
  s.close(4);  // "c" is idle now
  s.open(5, "127.0.0.1");
  EXPECT_FALSE(s.handle(5, R"([4, "d", "", 1])").close_sender);
  EXPECT_EQ(s.handle(9, "[1]").close_sender, true);  // unknown connection
}

TEST(TrackerState, MalformedMessagesCloseWithAReason) {
  TrackerState s("k");
  s.open(1, "127.0.0.1");
  auto r = s.handle(1, "[42]");
  EXPECT_TRUE(r.close_sender);
  EXPECT_NE(r.close_reason.find("unknown tracker code 42"), std::string::npos);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(s.counters().rejected_messages, 1u);
}

}  // namespace
}  // namespace anvil::rpc::tracker
