// Tests of tracker message parsing (valid shapes TVM sends, and hostile input) and replies.
#include "anvil/rpc/tracker/messages.h"

#include <gtest/gtest.h>

namespace anvil::rpc::tracker {
namespace {

TEST(TrackerMessages, ParsesEveryCodeTvmSends) {
  EXPECT_EQ(parse_message("[1]").code, TrackerCode::kPing);
  EXPECT_EQ(parse_message("[6]").code, TrackerCode::kSummary);
  EXPECT_EQ(parse_message("[7]").code, TrackerCode::kGetPendingMatchkeys);
  EXPECT_EQ(std::get<StopRequest>(parse_message(R"([2, "tracker:0.5"])").body).stop_key, "tracker:0.5");

  auto put = std::get<PutRequest>(parse_message(R"([3, "rasp", [9090, "rasp:0.25"], null])").body);
  EXPECT_EQ(put.key, "rasp");
  EXPECT_EQ(put.port, 9090);
  EXPECT_EQ(put.matchkey, "rasp:0.25");
  EXPECT_FALSE(put.custom_addr);
  auto put3 = std::get<PutRequest>(parse_message(R"([3, "xyz", [9091, "abc"]])").body);  // 3-element form
  EXPECT_EQ(put3.matchkey, "abc");
  auto put_addr = std::get<PutRequest>(parse_message(R"([3, "k", ["9092", "k:1"], "test_addr"])").body);
  EXPECT_EQ(*put_addr.custom_addr, "test_addr");
  EXPECT_EQ(put_addr.port, "9092");

  auto req = std::get<RequestRequest>(parse_message(R"([4, "rasp", "", 3])").body);
  EXPECT_EQ(req.key, "rasp");
  EXPECT_EQ(req.priority, 3);
  EXPECT_EQ(std::get<RequestRequest>(parse_message(R"([4, "rasp", "bob", -0.5])").body).priority, -0.5);

  auto info = std::get<UpdateInfoRequest>(parse_message(R"([5, {"key": "server:rasp", "addr": [null, 9090]}])").body);
  EXPECT_EQ(info.info["key"], "server:rasp");
  // Parsers accept any JSON spacing.
  EXPECT_EQ(parse_message(" [ 1 ] ").code, TrackerCode::kPing);
}

TEST(TrackerMessages, RejectsHostileInput) {
  const char* bad[] = {
      "",                                      // empty
      "[",                                     // truncated
      "not json",                              //
      "{\"code\": 1}",                         // not an array
      "[]",                                    // no code
      "[\"1\"]",                               // code not an integer
      "[1.5]",                                 //
      "[true]",                                //
      "[8]",                                   // unknown code
      "[-1]",                                  // FAIL is a reply, not a request
      "[2]",                                   // STOP without key
      "[3, \"k\"]",                            // PUT without slot
      "[3, \"k\", [9090]]",                    //
      "[3, 5, [9090, \"k:1\"]]",               // key not a string
      "[3, \"k\", [70000, \"k:1\"]]",          // port out of range
      "[3, \"k\", [{}, \"k:1\"]]",             //
      "[3, \"k\", [1, \"k:1\"], 7]",           // address not a string
      "[4, \"k\"]",                            // REQUEST without user
      "[4, \"k\", \"\", \"high\"]",            // priority not a number
      "[5, [1, 2]]",                           // info not an object
      "[5, {\"key\": \"server:k\"}]",          // no addr
      "[5, {\"addr\": [null]}]",               //
      "[5, {\"addr\": [1, 9090]}]",            // ip neither string nor null
      "[5, {\"key\": 3, \"addr\": [null, 1]}]",  //
      "[1, \"\xff\"]",                         // invalid UTF-8
  };
  for (const char* text : bad) {
    EXPECT_THROW(parse_message(text), MessageError) << text;
  }
  std::string deep = std::string(kMaxJsonDepth + 1, '[') + std::string(kMaxJsonDepth + 1, ']');
  EXPECT_THROW(parse_message(deep), MessageError);
  std::string deep_info = "[5, {\"addr\": [null, 1], \"x\": " + std::string(40, '[') + std::string(40, ']') + "}]";
  EXPECT_THROW(parse_message(deep_info), MessageError);
  std::string long_key = "[4, \"" + std::string(kMaxKeyBytes + 1, 'k') + "\", \"\", 1]";
  EXPECT_THROW(parse_message(long_key), MessageError);
  // A million opening brackets: rejected by the depth scan without recursion.
  EXPECT_THROW(parse_message(std::string(1 << 20, '[')), MessageError);
}

TEST(TrackerMessages, FormatsRepliesExactlyAsTvm) {
  EXPECT_EQ(reply_code(TrackerCode::kSuccess), "0");
  EXPECT_EQ(reply_code(TrackerCode::kFail), "-1");
  EXPECT_EQ(reply_match("127.0.0.1", 9090, "rasp:0.5"), R"([0, ["127.0.0.1", 9090, "rasp:0.5"]])");
  EXPECT_EQ(reply_matchkeys({"a:1", "a:2"}), R"(["a:1", "a:2"])");
  EXPECT_EQ(reply_matchkeys({}), "[]");
  Json summary = Json::object();
  summary["queue_info"] = Json::object();
  summary["server_info"] = Json::array();
  EXPECT_EQ(reply_summary(summary), R"([0, {"queue_info": {}, "server_info": []}])");
}

TEST(TrackerMessages, FramesAreLittleEndian) {
  EXPECT_EQ(encode_i32_le(kTrackerMagic), std::string("\x71\xF2\x02\x00", 4));
  EXPECT_EQ(make_frame("0"), std::string("\x01\x00\x00\x00" "0", 5));
  const unsigned char bytes[] = {0xFF, 0xFF, 0xFF, 0x7F};
  EXPECT_EQ(read_i32_le(bytes), 0x7FFFFFFF);
  EXPECT_EQ(tracker_code_name(7), "GET_PENDING_MATCHKEYS");
}

}  // namespace
}  // namespace anvil::rpc::tracker
