// Tests of text_summary(): TVM's exact layout, incl. its quirks.
#include "anvil/rpc/tracker/summary_text.h"

#include <gtest/gtest.h>

namespace anvil::rpc::tracker {
namespace {

TEST(SummaryText, MatchesTvmsQueryOutput) {
  Json summary = Json::parse(R"({"queue_info": {"rasp": {"free": 1, "pending": 0}},
      "server_info": [{"key": "server:rasp", "addr": ["10.0.0.5", 9090]}]})");
  EXPECT_EQ(query_output("127.0.0.1", 9190, summary),
            "Tracker address 127.0.0.1:9190\n\n"
            "Server List\n"
            "------------------------------\n"
            "server-address           key\n"
            "------------------------------\n"
            "10.0.0.5:9090            server:rasp\n"
            "------------------------------\n"
            "\n"
            "Queue Status\n"
            "----------------------------\n"
            "key    total  free  pending\n"
            "----------------------------\n"
            "rasp   1      1     0      \n"
            "----------------------------\n"
            "\n");
}

TEST(SummaryText, EmptyTrackerAndHiddenRows) {
  Json empty = Json::parse(R"({"queue_info": {}, "server_info": []})");
  EXPECT_EQ(text_summary(empty),
            "Server List\n------------------------------\nserver-address           key\n"
            "------------------------------\n------------------------------\n\n"
            "Queue Status\n---------------------------\nkey   total  free  pending\n"
            "---------------------------\n---------------------------\n");
  // A key with ':' never matches its servers (TVM counts key.split(":")[1]), so its row is
  // hidden while nothing is pending; long idle keys still widen the table.
  Json quirky = Json::parse(R"({"queue_info": {"127.0.0.1:5555": {"free": 1, "pending": 0},
      "a-very-long-idle-key": {"free": 0, "pending": 0}, "b": {"free": 0, "pending": 2}},
      "server_info": [{"key": "server:127.0.0.1:5555", "addr": ["127.0.0.1", 9091]},
                      {"key": "server:b", "addr": [null, "9092"]}]})");
  std::string text = text_summary(quirky);
  EXPECT_NE(text.find("None:9092                server:b\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("127.0.0.1:5555   "), std::string::npos) << text;
  EXPECT_NE(text.find("b                      1      0     2      \n"), std::string::npos) << text;
  EXPECT_EQ(server_totals(quirky).at("127.0.0.1"), 1);
}

TEST(SummaryText, SortsServersByKey) {
  Json summary = Json::parse(R"({"queue_info": {}, "server_info": [
      {"key": "server:z", "addr": ["1.1.1.1", 1]}, {"key": "server:a", "addr": ["2.2.2.2", 2]}]})");
  auto rows = server_rows(summary);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "server:a");
  EXPECT_EQ(rows[0].address, "2.2.2.2:2");
}

}  // namespace
}  // namespace anvil::rpc::tracker
