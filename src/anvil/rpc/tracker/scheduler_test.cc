// Tests of the per-key PriorityScheduler: priority order, FIFO within a priority, FIFO of
// free servers, removal of a closed connection's entries.
#include "anvil/rpc/tracker/scheduler.h"

#include <gtest/gtest.h>

namespace anvil::rpc::tracker {
namespace {

QueuedValue server(ConnId conn, const std::string& matchkey) { return QueuedValue{conn, "127.0.0.1", 9090, matchkey}; }

TEST(PriorityScheduler, ServesHigherPriorityFirstAndFifoWithinAPriority) {
  PriorityScheduler s;
  s.request(1, 1);
  s.request(2, 5);
  s.request(3, 1);
  s.request(4, 5);
  s.request(5, -2);
  s.request(6, 2.5);
  EXPECT_EQ(s.pending_count(), 6u);
  std::vector<ConnId> order;
  for (int i = 0; i < 6; ++i) {
    s.put(server(100, "k:" + std::to_string(i)));
    auto matches = s.schedule();
    ASSERT_EQ(matches.size(), 1u);
    order.push_back(matches[0].request.conn);
  }
  EXPECT_EQ(order, (std::vector<ConnId>{2, 4, 6, 1, 3, 5}));
  EXPECT_TRUE(s.empty());
}

TEST(PriorityScheduler, HandsOutTheOldestFreeServer) {
  PriorityScheduler s;
  s.put(server(10, "k:a"));
  s.put(server(11, "k:b"));
  s.put(server(12, "k:c"));
  EXPECT_TRUE(s.schedule().empty());
  EXPECT_EQ(s.free_count(), 3u);
  s.request(1, 1);
  s.request(2, 1);
  auto matches = s.schedule();
  ASSERT_EQ(matches.size(), 2u);
  EXPECT_EQ(matches[0].value.matchkey, "k:a");
  EXPECT_EQ(matches[0].request.conn, 1u);
  EXPECT_EQ(matches[1].value.matchkey, "k:b");
  EXPECT_EQ(s.free_count(), 1u);
  EXPECT_EQ(s.pending_count(), 0u);
}

TEST(PriorityScheduler, RemovesAClosedConnectionsEntries) {
  PriorityScheduler s;
  s.put(server(10, "k:a"));
  s.put(server(11, "k:b"));
  s.put(server(10, "k:c"));
  EXPECT_EQ(s.remove_values_of(10), 2u);
  EXPECT_EQ(s.free_count(), 1u);
  EXPECT_EQ(s.remove_values_of(10), 0u);
  PriorityScheduler r;
  r.request(1, 1);
  r.request(2, 9);
  r.request(1, 3);
  EXPECT_EQ(r.remove_requests_of(1), 2u);
  r.put(server(10, "k:z"));
  auto matches = r.schedule();
  ASSERT_EQ(matches.size(), 1u);
  EXPECT_EQ(matches[0].request.conn, 2u);
}

}  // namespace
}  // namespace anvil::rpc::tracker
