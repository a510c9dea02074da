// Tests of the tracker server on a loopback port, driven by raw sockets: handshake, replies,
// every limit (bad magic, frame sizes, timeouts, malformed JSON, connection count, replies
// nobody reads), priorities end to end, clean-up on disconnect, STOP, and the status port.
#include "anvil/rpc/tracker/tracker.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "anvil/base/error.h"
#include "anvil/rpc/tracker/messages.h"
#include "anvil/rpc/tracker/tracker_client.h"

namespace anvil::rpc::tracker {
namespace {

using namespace std::chrono_literals;

// A tracker serving on 127.0.0.1:<any port> on a background thread.
class RunningTracker {
 public:
  explicit RunningTracker(TrackerOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    options.port_end = 0;
    if (options.stop_key.empty()) options.stop_key = "tracker:test";
    tracker_ = std::make_unique<Tracker>(options);
    thread_ = std::thread([this] { tracker_->run(); });
  }
  ~RunningTracker() {
    tracker_->stop();
    thread_.join();
  }
  int port() const { return tracker_->port(); }
  Tracker& tracker() { return *tracker_; }
  void join() { thread_.join(); }

 private:
  std::unique_ptr<Tracker> tracker_;
  std::thread thread_;
};

// A raw TCP connection to 127.0.0.1 with bounded waits.
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
  // Reads exactly n bytes; returns fewer if the peer closed or the wait ran out.
  std::string recv(std::size_t n, std::chrono::milliseconds timeout = 5s) {
    std::string out;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (out.size() < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      pollfd pfd{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) break;
      char buf[4096];
      ssize_t r = ::recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<std::size_t>(r));
    }
    return out;
  }
  void handshake() {
    send(encode_i32_le(kTrackerMagic));
    ASSERT_EQ(recv(4), encode_i32_le(kTrackerMagic));
  }
  std::string call(const std::string& json) {
    send(make_frame(json));
    return recv_frame();
  }
  std::string recv_frame(std::chrono::milliseconds timeout = 5s) {
    std::string header = recv(4, timeout);
    if (header.size() < 4) return "<closed>";
    return recv(static_cast<std::size_t>(read_i32_le(reinterpret_cast<const unsigned char*>(header.data()))));
  }
  // True once the tracker has closed the connection (EOF or reset) within the timeout.
  bool closed_by_peer(std::chrono::milliseconds timeout = 5s) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 50) > 0) {
        char buf[4096];
        ssize_t r = ::recv(fd_, buf, sizeof(buf), 0);
        if (r <= 0) return true;
      }
    }
    return false;
  }

 private:
  int fd_ = -1;
};

TEST(TrackerServer, EchoesMagicAndAnswersPing) {
  RunningTracker t;
  Raw c(t.port());
  c.handshake();
  EXPECT_EQ(c.call("[1]"), "0");
  EXPECT_EQ(c.call("[6]"), R"([0, {"queue_info": {}, "server_info": []}])");
}

TEST(TrackerServer, AcceptsMagicAndMessageInOneSegment) {
  RunningTracker t;
  Raw c(t.port());
  c.send(encode_i32_le(kTrackerMagic) + make_frame("[1]"));
  EXPECT_EQ(c.recv(4), encode_i32_le(kTrackerMagic));
  EXPECT_EQ(c.recv_frame(), "0");
}

TEST(TrackerServer, ClosesOnEveryBrokenLimitAndKeepsServing) {
  TrackerOptions options;
  options.connection.handshake_timeout = 300ms;
  options.connection.frame_timeout = 300ms;
  RunningTracker t(options);
  Raw healthy(t.port());
  healthy.handshake();
  {
    Raw c(t.port());
    c.send(encode_i32_le(0x12345678));
    EXPECT_TRUE(c.closed_by_peer()) << "bad magic";
  }
  {
    Raw c(t.port());
    c.send(std::string("\x71\xF2", 2));
    EXPECT_TRUE(c.closed_by_peer(3s)) << "half a magic, then silence";
  }
  {
    Raw c(t.port());
    EXPECT_TRUE(c.closed_by_peer(3s)) << "no magic at all";
  }
  for (int32_t size : {0x7FFFFFFF, 0, -5, static_cast<int32_t>(kMaxFrameBytes + 1)}) {
    Raw c(t.port());
    c.handshake();
    c.send(encode_i32_le(size));
    EXPECT_TRUE(c.closed_by_peer()) << "frame size " << size;
  }
  {
    Raw c(t.port());
    c.handshake();
    c.send(encode_i32_le(100) + "[1");
    EXPECT_TRUE(c.closed_by_peer(3s)) << "frame never completed";
  }
  for (const char* junk : {"not json", "{}", "[99]", "[3, \"k\"]", "[5, 1]", "[\"1\"]"}) {
    Raw c(t.port());
    c.handshake();
    c.send(make_frame(junk));
    EXPECT_TRUE(c.closed_by_peer()) << junk;
  }
  {
    Raw c(t.port());
    c.handshake();
    c.send(make_frame(std::string(200, '[') + std::string(200, ']')));
    EXPECT_TRUE(c.closed_by_peer()) << "deep nesting";
  }
  {
    // The largest legal frame is read (and then rejected as JSON only for its content).
    Raw c(t.port());
    c.handshake();
    std::string big = "[1, \"" + std::string(kMaxFrameBytes - 8, 'x') + "\"]";
    ASSERT_EQ(big.size(), kMaxFrameBytes - 1);
    EXPECT_EQ(c.call(big), "0");
  }
  // Idle connections are not timed out: the healthy one still works after all this.
  EXPECT_EQ(healthy.call("[1]"), "0");
}

TEST(TrackerServer, RefusesConnectionsBeyondTheLimit) {
  TrackerOptions options;
  options.max_connections = 2;
  RunningTracker t(options);
  Raw a(t.port()), b(t.port());
  a.handshake();
  b.handshake();
  Raw c(t.port());
  EXPECT_TRUE(c.closed_by_peer());
  EXPECT_EQ(a.call("[1]"), "0");
}

TEST(TrackerServer, ClosesAPeerThatDoesNotReadItsReplies) {
  TrackerOptions options;
  options.connection.max_write_backlog = 1u << 20;
  RunningTracker t(options);
  Raw server(t.port());
  server.handshake();
  std::string pad(15000, 'p');
  ASSERT_EQ(server.call(R"([5, {"key": "server:big", "addr": [null, 1], "pad": ")" + pad + "\"}]"), "0");
  Raw reader(t.port());
  reader.handshake();
  std::string burst;
  for (int i = 0; i < 4000; ++i) burst += make_frame("[6]");  // ~60 MB of replies, never read
  reader.send(burst);
  Raw probe(t.port());
  probe.handshake();
  // The tracker drops the reader once its backlog passes the limit, and keeps serving.
  EXPECT_TRUE(reader.closed_by_peer(10s));
  EXPECT_EQ(probe.call("[1]"), "0");
}

TEST(TrackerServer, ServesRequestsByPriorityOverSockets) {
  RunningTracker t;
  Raw server(t.port());
  server.handshake();
  std::vector<std::unique_ptr<Raw>> clients;
  std::vector<int> priorities = {1, 5, 1, 3};
  for (int p : priorities) {
    clients.push_back(std::make_unique<Raw>(t.port()));
    clients.back()->handshake();
    clients.back()->send(make_frame("[4, \"dev\", \"\", " + std::to_string(p) + "]"));
  }
  TrackerClient q("127.0.0.1", t.port());
  for (int i = 0; i < 50 && q.summary()["queue_info"]["dev"]["pending"] != 4; ++i) std::this_thread::sleep_for(10ms);
  std::vector<int> served;
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(server.call("[3, \"dev\", [9000, \"dev:" + std::to_string(i) + "\"]]"), "0");
    for (std::size_t c = 0; c < clients.size(); ++c) {
      std::string reply = clients[c] ? clients[c]->recv_frame(100ms) : "<closed>";
      if (reply != "<closed>") {
        EXPECT_EQ(reply, "[0, [\"127.0.0.1\", 9000, \"dev:" + std::to_string(i) + "\"]]");
        served.push_back(static_cast<int>(c));
        clients[c].reset();
      }
    }
  }
  EXPECT_EQ(served, (std::vector<int>{1, 3, 0, 2}));
}

TEST(TrackerServer, DisconnectsRemoveServersAndRequestsAtOnce) {
  RunningTracker t;
  TrackerClient q("127.0.0.1", t.port());
  {
    Raw server(t.port());
    server.handshake();
    ASSERT_EQ(server.call(R"([5, {"key": "server:gone", "addr": [null, 9000]}])"), "0");
    ASSERT_EQ(server.call(R"([3, "gone", [9000, "gone:1"], null])"), "0");
    EXPECT_EQ(q.summary()["queue_info"]["gone"]["free"], 1);
    Raw client(t.port());
    client.handshake();
    client.send(make_frame(R"([4, "other", "", 1])"));
    for (int i = 0; i < 50 && q.summary()["queue_info"].count("other") == 0; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_EQ(q.summary()["queue_info"]["other"]["pending"], 1);
  }
  Json summary;
  for (int i = 0; i < 100; ++i) {
    summary = q.summary();
    if (summary["queue_info"]["gone"]["free"] == 0 && summary["queue_info"]["other"]["pending"] == 0) break;
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(summary["queue_info"]["gone"]["free"], 0);
  EXPECT_EQ(summary["queue_info"]["other"]["pending"], 0);
  EXPECT_TRUE(summary["server_info"].empty());
}

TEST(TrackerServer, StopNeedsTheKeyAndRepliesBeforeClosing) {
  TrackerOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.port_end = 0;
  options.stop_key = "tracker:0.99";
  Tracker tracker(options);
  std::thread runner([&] { tracker.run(); });
  Raw c(tracker.port());
  c.handshake();
  EXPECT_EQ(c.call(R"([2, "tracker:0.1"])"), "-1");
  EXPECT_EQ(c.call(R"([2, "tracker:0.99"])"), "0");
  runner.join();  // run() returns on its own
  EXPECT_TRUE(c.closed_by_peer());
}

TEST(TrackerServer, BindsTheFirstFreePortOfTheRange) {
  RunningTracker first;
  TrackerOptions options;
  options.host = "127.0.0.1";
  options.port = first.port();
  options.port_end = first.port() + 1;
  EXPECT_THROW(Tracker{options}, anvil::Error);
}

TEST(TrackerServer, ServesTheStatusPage) {
  TrackerOptions options;
  options.http_port = 0;
  RunningTracker t(options);
  int http_port = t.tracker().http_port();
  ASSERT_GT(http_port, 0);
  Raw server(t.port());
  server.handshake();
  ASSERT_EQ(server.call(R"([5, {"key": "server:<b>", "addr": [null, 9000]}])"), "0");
  ASSERT_EQ(server.call(R"([3, "<b>", [9000, "<b>:1"]])"), "0");
  auto get = [&](const std::string& request) {
    Raw h(http_port);
    h.send(request);
    return h.recv(1 << 20, 2s);
  };
  std::string page = get("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(page.find("HTTP/1.0 200 OK"), std::string::npos);
  EXPECT_NE(page.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(page.find("<td>server:&lt;b&gt;</td>"), std::string::npos) << page;
  std::string json = get("GET /summary.json HTTP/1.0\r\n\r\n");
  EXPECT_NE(json.find(R"({"queue_info": {"<b>": {"free": 1, "pending": 0}})"), std::string::npos) << json;
  std::string metrics = get("GET /metrics HTTP/1.0\r\n\r\n");
  EXPECT_NE(metrics.find("anvil_tracker_queue_free{key=\"<b>\"} 1\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("anvil_tracker_puts_total 1\n"), std::string::npos);
  EXPECT_NE(get("GET /nope HTTP/1.0\r\n\r\n").find("404"), std::string::npos);
  EXPECT_NE(get("POST / HTTP/1.0\r\n\r\n").find("405"), std::string::npos);
  EXPECT_NE(get(std::string(10000, 'A')).find("431"), std::string::npos);
  EXPECT_EQ(server.call("[1]"), "0");
}

}  // namespace
}  // namespace anvil::rpc::tracker
