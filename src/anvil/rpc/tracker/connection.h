// One TCP connection to the tracker: the magic handshake, length-prefixed frames with size and
// time limits, and a bounded queue of outgoing frames. It knows nothing of the protocol: whole
// frames go to its owner, which answers through send().
//
// Time limits: the 4-byte magic must arrive within handshake_timeout; once the first byte of a
// frame has arrived, the rest must follow within frame_timeout. Between frames a connection may
// stay idle without limit, because TVM's protocol needs it (a REQUEST is answered only when a
// server frees up; a server's tracker connection is silent for a whole session); TCP keepalive
// finds dead peers there instead.
#pragma once

#ifndef ASIO_STANDALONE
#define ASIO_STANDALONE  // Debian's libasio-dev: Asio without Boost
#endif
#include <asio.hpp>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>

#include "anvil/rpc/tracker/scheduler.h"

namespace anvil::rpc::tracker {

struct ConnectionLimits {
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds frame_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
  std::size_t max_write_backlog = 8u << 20;  // bytes queued for a peer that does not read
};

class ConnectionOwner {
 public:
  virtual ~ConnectionOwner() = default;
  // A complete frame's payload; the connection is open.
  virtual void on_frame(ConnId conn, std::string_view payload) = 0;
  // The connection closed; `category` names the cause for metrics ("eof", "frame_size", ...).
  virtual void on_closed(ConnId conn, std::string_view category) = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(asio::ip::tcp::socket socket, ConnId id, std::string peer_ip, ConnectionOwner& owner,
             const ConnectionLimits& limits);

  void start();
  // Queues one framed reply; closes the connection if the peer has stopped reading.
  void send(std::string frame);
  // Closes now; `reason` (if not empty) is logged as a warning.
  void close(std::string_view category, const std::string& reason);
  // Closes once everything queued has been written (STOP's reply must reach its sender).
  void close_after_flush();

  bool is_open() const { return !closed_; }
  ConnId id() const { return id_; }
  const std::string& peer_ip() const { return peer_ip_; }

 private:
  void read_more();
  void on_read(const asio::error_code& ec, std::size_t n);
  // Consumes complete frames from inbuf_; returns false if the connection closed meanwhile.
  bool process_input();
  void arm_read_deadline(std::chrono::milliseconds timeout, std::string_view category);
  void disarm_read_deadline();
  void write_next();
  std::string name() const;

  asio::ip::tcp::socket socket_;
  ConnId id_;
  std::string peer_ip_;
  uint16_t peer_port_ = 0;
  ConnectionOwner& owner_;
  ConnectionLimits limits_;
  asio::steady_timer read_timer_;
  asio::steady_timer write_timer_;
  uint64_t read_deadline_gen_ = 0;  // a deadline handler acts only if still current
  bool read_deadline_armed_ = false;
  bool handshaken_ = false;
  bool closed_ = false;
  bool close_when_flushed_ = false;
  std::array<char, 4096> chunk_{};
  std::string inbuf_;
  std::deque<std::string> outq_;
  std::size_t out_bytes_ = 0;
  bool writing_ = false;
  uint64_t write_gen_ = 0;  // likewise for the write deadline
};

}  // namespace anvil::rpc::tracker
