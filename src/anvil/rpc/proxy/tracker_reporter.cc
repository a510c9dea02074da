// Asynchronous tracker client of the proxy (see tracker_reporter.h).
#include "anvil/rpc/proxy/tracker_reporter.h"

#include <cstring>

#include "anvil/base/error.h"
#include "anvil/rpc/address.h"
#include "anvil/rpc/protocol.h"

namespace anvil::rpc::proxy {
namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(10);
constexpr int32_t kMaxReply = 1 << 20;  // the tracker's own frame limit

std::string i32_bytes(int32_t v) { return std::string(reinterpret_cast<const char*>(&v), 4); }

}  // namespace

TrackerReporter::TrackerReporter(asio::io_context& io, const std::string& tracker)
    : socket_(io), resolver_(io), timer_(io) {
  HostPort hp = parse_host_port(tracker, "--tracker");
  host_ = hp.host;
  port_ = std::to_string(hp.port);
  address_ = tracker;
}

void TrackerReporter::arm(std::chrono::seconds timeout) {
  timer_.expires_after(timeout);
  timer_.async_wait([this, gen = generation_](const asio::error_code& ec) {
    if (!ec && gen == generation_) fail("no answer within 10 s");
  });
}

void TrackerReporter::connect() {
  if (state_ != State::kDisconnected) return;
  state_ = State::kConnecting;
  uint64_t gen = ++generation_;
  arm(kRequestTimeout);
  resolver_.async_resolve(
      asio::ip::tcp::v4(), host_, port_, [this, gen](const asio::error_code& ec, asio::ip::tcp::resolver::results_type r) {
        if (gen != generation_) return;
        if (ec) return fail(str_cat("cannot resolve: ", ec.message()));
        asio::async_connect(socket_, r, [this, gen](const asio::error_code& ec2, const asio::ip::tcp::endpoint&) {
          if (gen != generation_) return;
          if (ec2) return fail(str_cat("cannot connect: ", ec2.message()));
          header_ = i32_bytes(kRPCTrackerMagic);
          asio::async_write(socket_, asio::buffer(header_), [this, gen](const asio::error_code& ec3, size_t) {
            if (gen != generation_) return;
            if (ec3) return fail(ec3.message());
            header_.assign(4, '\0');
            asio::async_read(socket_, asio::buffer(header_), [this, gen](const asio::error_code& ec4, size_t) {
              if (gen != generation_) return;
              if (ec4) return fail(str_cat("magic exchange: ", ec4.message()));
              if (header_ != i32_bytes(kRPCTrackerMagic)) return fail("not an RPC tracker (wrong magic)");
              timer_.cancel();
              state_ = State::kReady;
              if (on_connected) on_connected();
              pump();
            });
          });
        });
      });
}

void TrackerReporter::call(const Json& request, Reply reply) {
  std::string json = request.dump(-1, ' ', /*ensure_ascii=*/true);
  queue_.push_back(Call{i32_bytes(static_cast<int32_t>(json.size())) + json, std::move(reply)});
  pump();
}

void TrackerReporter::pump() {
  if (state_ != State::kReady || busy_ || queue_.empty()) return;
  busy_ = true;
  uint64_t gen = generation_;
  arm(kRequestTimeout);
  asio::async_write(socket_, asio::buffer(queue_.front().frame), [this, gen](const asio::error_code& ec, size_t) {
    if (gen != generation_) return;
    if (ec) return fail(ec.message());
    header_.assign(4, '\0');
    asio::async_read(socket_, asio::buffer(header_), [this, gen](const asio::error_code& ec2, size_t) {
      if (gen != generation_) return;
      if (ec2) return fail(ec2.message());
      int32_t len;
      std::memcpy(&len, header_.data(), 4);
      if (len <= 0 || len > kMaxReply) return fail(str_cat("reply of ", len, " bytes"));
      body_.assign(static_cast<size_t>(len), '\0');
      asio::async_read(socket_, asio::buffer(body_), [this, gen](const asio::error_code& ec3, size_t) {
        if (gen != generation_) return;
        if (ec3) return fail(ec3.message());
        timer_.cancel();
        Json reply = Json::parse(body_, nullptr, /*allow_exceptions=*/false);
        if (reply.is_discarded()) return fail("malformed JSON reply");
        Call done = std::move(queue_.front());
        queue_.pop_front();
        busy_ = false;
        if (done.reply) done.reply(std::move(reply));
        pump();
      });
    });
  });
}

void TrackerReporter::fail(const std::string& why) {
  if (state_ == State::kDisconnected) return;
  close();
  if (on_lost) on_lost(why);
}

void TrackerReporter::close() {
  ++generation_;
  state_ = State::kDisconnected;
  busy_ = false;
  asio::error_code ec;
  timer_.cancel();
  resolver_.cancel();
  socket_.close(ec);
  std::deque<Call> dropped;
  dropped.swap(queue_);
  for (Call& c : dropped) {
    if (c.reply) c.reply(std::nullopt);
  }
}

}  // namespace anvil::rpc::proxy
