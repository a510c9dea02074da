// The proxy's connection to an RPC tracker (spec §4, §5 "tracker mode"), asynchronous on the
// proxy's io_context: connect and exchange the tracker magic, then one JSON request at a time
// (i32 length + ASCII JSON), each reply handed to its callback. Any failure (connect, timeout
// of 10 s per request, a malformed or oversized reply) closes the connection, fails every
// queued request, and reports `on_lost`; the proxy reconnects on its next tick.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE
#endif
#include <asio.hpp>
#include <nlohmann/json.hpp>

#include <deque>
#include <functional>
#include <optional>
#include <string>

namespace anvil::rpc::proxy {

class TrackerReporter {
 public:
  using Json = nlohmann::json;
  using Reply = std::function<void(std::optional<Json>)>;  // nullopt: the request failed

  // tracker: "host:port" (split on the last ':'); ValueError when malformed.
  TrackerReporter(asio::io_context& io, const std::string& tracker);

  // Starts connecting unless connected or connecting; on success runs on_connected.
  void connect();
  bool connected() const { return state_ == State::kReady; }
  void call(const Json& request, Reply reply);
  void close();

  std::function<void()> on_connected;
  std::function<void(const std::string&)> on_lost;
  const std::string& address() const { return address_; }

 private:
  enum class State { kDisconnected, kConnecting, kReady };
  void fail(const std::string& why);
  void pump();
  void arm(std::chrono::seconds timeout);

  std::string host_;
  std::string port_;
  std::string address_;
  asio::ip::tcp::socket socket_;
  asio::ip::tcp::resolver resolver_;
  asio::steady_timer timer_;
  State state_ = State::kDisconnected;
  uint64_t generation_ = 0;  // handlers of a closed connection see a newer generation and stop
  struct Call {
    std::string frame;
    Reply reply;
  };
  std::deque<Call> queue_;
  bool busy_ = false;
  std::string header_;
  std::string body_;
};

}  // namespace anvil::rpc::proxy
