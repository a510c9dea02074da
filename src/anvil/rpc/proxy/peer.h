// One TCP connection at the proxy, through its whole life: the handshake (with a deadline and
// the parser's limits), waiting to be paired (any byte is a protocol error, EOF leaves the
// pool, an optional wait deadline), and relaying to its partner with backpressure (a read is
// issued only after the previous chunk was written to the partner, so memory per pair is two
// buffers). Either side closing closes both once what is queued has been written.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE  // Debian's libasio-dev: Asio without Boost
#endif
#include <asio.hpp>

#include <array>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "anvil/rpc/proxy/handshake_parser.h"
#include "anvil/rpc/proxy/pairing.h"

namespace anvil::rpc::proxy {

class Peer;

class PeerOwner {
 public:
  virtual ~PeerOwner() = default;
  // The handshake is complete (parser() is kDone).
  virtual void on_handshake(const std::shared_ptr<Peer>& peer) = 0;
  // The connection is gone; called once.
  virtual void on_closed(Peer& peer) = 0;
};

class Peer : public std::enable_shared_from_this<Peer> {
 public:
  enum class State { kHandshake, kWaiting, kRelaying, kClosing, kClosed };

  Peer(asio::ip::tcp::socket socket, PeerId id, PeerOwner& owner, uint32_t max_key_bytes);

  // Starts reading; the handshake must be complete within `handshake_timeout`.
  void start(std::chrono::milliseconds handshake_timeout);
  // Handshake done, no partner yet: wait, and after `timeout` (if positive) call on_expire.
  void wait_for_partner(std::chrono::milliseconds timeout, std::function<void()> on_expire);
  // Pairs two waiting/handshaken peers: each gets SUCCESS + the other's key, then bytes flow.
  static void pair(const std::shared_ptr<Peer>& a, const std::shared_ptr<Peer>& b);
  // Sends one i32 code (DUPLICATE, MISMATCH), then closes.
  void refuse(int32_t code, const std::string& reason);
  // Closes now, logging `reason` when not empty; the partner follows after flushing.
  void close(const std::string& reason);

  PeerId id() const { return id_; }
  State state() const { return state_; }
  const HandshakeParser& parser() const { return parser_; }
  const std::string& address() const { return address_; }
  // "client 'k' from 1.2.3.4:5" for logs.
  std::string name() const;

 private:
  void read_more();
  void on_read(const asio::error_code& ec, size_t n);
  // Queues bytes for this socket; `then` runs once they are written (relay backpressure).
  void write(std::string bytes, std::function<void()> then = {});
  void write_next();
  // Closes after the queued bytes are written (within a grace period).
  void close_after_flush();
  void shut();

  asio::ip::tcp::socket socket_;
  PeerId id_;
  PeerOwner& owner_;
  HandshakeParser parser_;
  std::string address_;
  State state_ = State::kHandshake;
  asio::steady_timer timer_;  // handshake deadline, then the wait deadline, then the close grace
  std::weak_ptr<Peer> partner_;
  std::array<char, 64 * 1024> buf_{};
  struct Pending {
    std::string bytes;
    std::function<void()> then;
  };
  std::deque<Pending> outq_;
  bool writing_ = false;
  bool reading_ = false;
  bool owner_notified_ = false;
};

}  // namespace anvil::rpc::proxy
